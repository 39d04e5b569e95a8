// Internal: a schema's field found by name as SQL resolves names
// (case-insensitively), for the incremental operators' C++ paths.
#pragma once

#include <string>

#include <arrow/type.h>

#include "ir/validate_internal.h"

namespace thund::native {

// The index of the first field of `schema` named `name` (any case), or -1.
inline int FieldIndexNamed(const arrow::Schema& schema, const std::string& name) {
  const std::string want = internal::Lower(name);
  for (int i = 0; i < schema.num_fields(); ++i) {
    if (internal::Lower(schema.field(i)->name()) == want) return i;
  }
  return -1;
}

}  // namespace thund::native
