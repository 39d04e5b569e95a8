"""Writes the generated seeds of the drop_reader and thrift_footer fuzz targets.

Run with the bootstrap's Python (it has pyarrow):
    .deps/venv/bin/python fuzz/corpus/make_seeds.py
The seeds are committed; this only documents (and can redo) how they were made.
"""
import io
import os
import struct

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "wb") as f:
        f.write(data)


# drop_reader: first byte = bit0 JSON, bit1 no header, bit2 ';', bits 3-4 the
# expected columns (0 none, 1 id/name/amount, 2 ts/flag, 3 id not null).
drops = {
    "csv_typed": b"\x08id,name,amount\n1,ab,2.5\n2,caf\xc3\xa9,3\n3,,\n",
    "csv_untyped": b"\x00a,b\n1,x\n2,y\n",
    "csv_quoted": b"\x08id,name,amount\n1,\"a,b\",1\n2,\"say \"\"hi\"\"\",2\n",
    "csv_semicolon": b"\x0cid;name;amount\n1;a;1\n",
    "csv_ts": b"\x10ts,flag\n2024-01-01 00:00:00,true\n2024-01-02T03:04:05,false\n",
    "csv_noheader": b"\x1a1\n2\n3\n",
    "json_typed": b'\x09{"id":1,"name":"a","amount":1.5}\n{"id":2,"name":"b","amount":null}\n',
    "json_untyped": b'\x01{"x":1,"y":[1,2]}\n{"x":2,"z":{"a":"s"}}\n',
    "json_notnull": b'\x19{"id":7}\n{"id":8}\n',
}
for name, data in drops.items():
    write("drop_reader", name, data)

# thrift_footer: first byte = copies and page shift; the rest a real footer.
tables = {
    "ints": pa.table({"id": pa.array(range(100), pa.int64()), "k": pa.array([i % 7 for i in range(100)], pa.int32())}),
    "strings": pa.table({"s": ["a", None, "ccc", "dddd"] * 10, "b": [True, False, None, True] * 10}),
    "nested": pa.table({"l": [[1, 2], [], None, [3]] * 5, "m": [{"x": 1, "y": "a"}] * 20}),
    "temporal": pa.table({"ts": pa.array(range(0, 50_000_000, 1_000_000), pa.timestamp("us", tz="UTC")), "d": pa.array([1.5] * 50)}),
}
for name, table in tables.items():
    for variant, kwargs in {
        "plain": dict(compression="none"),
        "snappy_stats_index": dict(compression="snappy", write_statistics=True, write_page_index=True, row_group_size=16),
    }.items():
        buf = io.BytesIO()
        pq.write_table(table, buf, **kwargs)
        raw = buf.getvalue()
        (length,) = struct.unpack("<I", raw[-8:-4])
        footer = raw[-8 - length:-8]
        write("thrift_footer", f"{name}_{variant}", bytes([len(name) % 8 * 4 + 1]) + footer)
