#!/usr/bin/env bash
# Generates the small, deterministic shop data set the batch example reads:
#   customers.csv, products.json (newline-delimited), orders/2024-01-DD.csv.
# Same arguments -> byte-identical files (a fixed-seed MINSTD generator in awk;
# no network, no Python).
#
#   examples/batch/generate_data.sh [OUT_DIR] [DAYS] [ORDERS_PER_DAY]
#
# Defaults: examples/batch/data, 31 days, 250 orders per day. A few rows are
# deliberately bad, so the pipeline's expectations and bad-row handling have
# something to do: quantities <= 0, an unknown status, and one malformed CSV
# line (on 2024-01-15).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-$HERE/data}"
DAYS="${2:-31}"
PER_DAY="${3:-250}"
rm -rf "$OUT"
mkdir -p "$OUT/orders"

awk -v out="$OUT" -v days="$DAYS" -v per_day="$PER_DAY" '
function rnd(n) { seed = (48271 * seed) % 2147483647; return seed % n }
BEGIN {
  seed = 20240101
  ncountries = split("DE FR NL US GB SE", countries, " ")
  nfirst = split("Ada Bo Cy Dee Eli Fay Gus Hal Ivy Jo Kai Liv Max Nia Oto Pia", first, " ")
  ncat = split("books games garden kitchen music toys", cats, " ")
  customers = 400
  print "customer_id,name,country,signup_date" > (out "/customers.csv")
  for (c = 1; c <= customers; c++) {
    printf "%d,%s %c.,%s,2023-%02d-%02d\n", c, first[1 + rnd(nfirst)], 65 + rnd(26),
           countries[1 + rnd(ncountries)], 1 + rnd(12), 1 + rnd(28) > (out "/customers.csv")
  }
  products = 60
  for (p = 1; p <= products; p++) {
    cents = 199 + rnd(9800)
    printf "{\"product_id\": %d, \"name\": \"%s item %d\", \"category\": \"%s\", \"price\": %d.%02d}\n",
           p, cats[1 + (p % ncat)], p, cats[1 + (p % ncat)], int(cents / 100), cents % 100 \
           > (out "/products.json")
  }
  order_id = 100000
  nstatus = split("placed shipped delivered delivered delivered returned", statuses, " ")
  for (d = 1; d <= days; d++) {
    file = sprintf("%s/orders/2024-01-%02d.csv", out, d)
    print "order_id,customer_id,product_id,quantity,status,ordered_at" > file
    for (i = 0; i < per_day; i++) {
      order_id++
      qty = 1 + rnd(5)
      if (rnd(100) == 0) qty = -rnd(3)          # ~1%: not a valid quantity
      status = statuses[1 + rnd(nstatus)]
      if (rnd(200) == 0) status = "lost"         # ~0.5%: an unknown status
      printf "%d,%d,%d,%d,%s,2024-01-%02d %02d:%02d:%02d\n", order_id, 1 + rnd(customers),
             1 + rnd(products), qty, status, d, rnd(24), rnd(60), rnd(60) > file
      if (d == 15 && i == 7) print "this line is not an order" > file
    }
    close(file)
  }
}'
echo "generated $(ls "$OUT/orders" | wc -l) order files under $OUT"
