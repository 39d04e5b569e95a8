# Build speed: ccache for every compile, and (THUND_PCH, off by default; see
# the option in CMakeLists.txt and docs/install.md) precompiled headers for the
# core targets.
#
# ccache's settings travel with the build tree (not only with scripts/build.sh),
# so `ninja -C build`, `pip install .` (scikit-build-core) and scripts/build.sh
# share one cache, and clones of the tree share it too (CCACHE_BASEDIR makes
# paths under the source tree relative). With precompiled headers ccache needs
# the PCH sloppiness and GCC's -fpch-preprocess (ccache manual, "Precompiled
# headers"); a user's CCACHE_DIR is kept.

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      "${CMAKE_COMMAND}" -E env "CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}" CCACHE_NOHASHDIR=1
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      "${CCACHE_PROGRAM}")
  if(THUND_PCH)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fpch-preprocess>)
  endif()
endif()

# The headers precompiled per target (each target gets its own .gch, built with
# that target's flags). Only third-party and standard headers: editing thund's
# own headers never rebuilds a PCH.
set(THUND_PCH_BASE
  <algorithm> <cstdint> <functional> <map> <memory> <optional> <set> <sstream> <string>
  <string_view> <vector> <filesystem>
  <arrow/result.h> <arrow/status.h> <arrow/type.h> <arrow/array.h> <arrow/record_batch.h>
  <arrow/table.h>)
set(THUND_PCH_JSON <nlohmann/json.hpp>)
set(THUND_PCH_ENGINE <arrow/compute/api.h> <arrow/filesystem/filesystem.h>
  <arrow/io/interfaces.h> <parquet/arrow/reader.h> <parquet/arrow/writer.h>)
set(THUND_PCH_CLI <CLI/CLI.hpp>)

# thund_precompile(target [JSON] [ENGINE] [CLI]): the base set plus the named groups.
function(thund_precompile target)
  if(NOT THUND_PCH)
    return()
  endif()
  cmake_parse_arguments(A "JSON;ENGINE;CLI" "" "" ${ARGN})
  set(_h ${THUND_PCH_BASE})
  if(A_JSON)
    list(APPEND _h ${THUND_PCH_JSON})
  endif()
  if(A_ENGINE)
    list(APPEND _h ${THUND_PCH_ENGINE})
  endif()
  if(A_CLI)
    list(APPEND _h ${THUND_PCH_CLI})
  endif()
  target_precompile_headers(${target} PRIVATE ${_h})
endfunction()
