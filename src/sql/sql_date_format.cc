// Java (Spark) date-time patterns -> DuckDB strftime / strptime patterns.
#include <cctype>

#include "sql/sql_dialect_internal.h"

namespace thund::sql {

arrow::Result<std::string> JavaToStrftime(std::string_view p) {
  std::string out;
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    if (c == '\'') {  // quoted literal text; '' is a quote
      size_t j = i + 1;
      if (j < p.size() && p[j] == '\'') {
        out += '\'';
        i += 2;
        continue;
      }
      while (j < p.size() && p[j] != '\'') {
        out += p[j] == '%' ? std::string("%%") : std::string(1, p[j]);
        ++j;
      }
      i = j + 1;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) {
      out += c == '%' ? std::string("%%") : std::string(1, c);
      ++i;
      continue;
    }
    size_t n = 1;
    while (i + n < p.size() && p[i + n] == c) ++n;
    std::string spec;
    switch (c) {
      case 'y':
      case 'u':
        spec = n == 2 ? "%y" : "%Y";
        break;
      case 'M':
      case 'L':
        spec = n >= 4 ? "%B" : n == 3 ? "%b" : n == 2 ? "%m" : "%-m";
        break;
      case 'd':
        spec = n == 2 ? "%d" : "%-d";
        break;
      case 'D':
        spec = n == 3 ? "%j" : "%-j";
        break;
      case 'H':
        spec = n == 2 ? "%H" : "%-H";
        break;
      case 'h':
        spec = n == 2 ? "%I" : "%-I";
        break;
      case 'm':
        spec = n == 2 ? "%M" : "%-M";
        break;
      case 's':
        spec = n == 2 ? "%S" : "%-S";
        break;
      case 'S':
        if (n == 3)
          spec = "%g";
        else if (n == 6)
          spec = "%f";
        else if (n == 9)
          spec = "%n";
        break;
      case 'a':
        spec = "%p";
        break;
      case 'E':
        spec = n >= 4 ? "%A" : "%a";
        break;
      case 'Z':
      case 'X':
      case 'x':
        spec = "%z";
        break;
      case 'z':
      case 'V':
        spec = "%Z";
        break;
      default:
        break;
    }
    if (spec.empty()) {
      return arrow::Status::Invalid("date pattern letter '", std::string(n, c), "' in '",
                                    std::string(p), "' has no DuckDB equivalent");
    }
    out += spec;
    i += n;
  }
  return out;
}

}  // namespace thund::sql
