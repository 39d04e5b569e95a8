# Locates the project-local dependencies installed by scripts/bootstrap.sh and
# exposes them as imported targets:
#   thund::arrow  thund::arrow_compute  thund::parquet  thund::arrow_dataset
#   thund::arrow_acero  thund::duckdb
# Binaries get an rpath to these directories, so they run with no environment set.

set(THUND_DEPS_DIR "${PROJECT_SOURCE_DIR}/.deps" CACHE PATH "bootstrap output directory")
file(GLOB _pyarrow_dirs "${THUND_DEPS_DIR}/venv/lib/python3*/site-packages/pyarrow")
list(LENGTH _pyarrow_dirs _n)
if(_n EQUAL 0)
  message(FATAL_ERROR "pyarrow not found under ${THUND_DEPS_DIR}/venv: run scripts/bootstrap.sh first")
endif()
list(GET _pyarrow_dirs 0 THUND_PYARROW_DIR)
set(THUND_ARROW_INCLUDE "${THUND_PYARROW_DIR}/include")
set(THUND_DUCKDB_DIR "${THUND_DEPS_DIR}/duckdb")
if(NOT EXISTS "${THUND_DUCKDB_DIR}/libduckdb.so")
  message(FATAL_ERROR "DuckDB not found under ${THUND_DUCKDB_DIR}: run scripts/bootstrap.sh first")
endif()

# The wheel ships versioned sonames only (libarrow.so.2600); link them by path.
function(thund_import_arrow_lib target file)
  set(_path "${THUND_PYARROW_DIR}/${file}")
  if(NOT EXISTS "${_path}")
    message(FATAL_ERROR "missing ${_path} in the pyarrow wheel")
  endif()
  add_library(${target} SHARED IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${_path}"
    IMPORTED_NO_SONAME FALSE)
  target_include_directories(${target} SYSTEM INTERFACE "${THUND_ARROW_INCLUDE}")
endfunction()

thund_import_arrow_lib(thund::arrow libarrow.so.2600)
thund_import_arrow_lib(thund::arrow_compute libarrow_compute.so.2600)
thund_import_arrow_lib(thund::parquet libparquet.so.2600)
thund_import_arrow_lib(thund::arrow_acero libarrow_acero.so.2600)
thund_import_arrow_lib(thund::arrow_dataset libarrow_dataset.so.2600)
# pyarrow is built with the new libstdc++ ABI, like Debian's g++.
target_compile_definitions(thund::arrow INTERFACE _GLIBCXX_USE_CXX11_ABI=1)

add_library(thund::duckdb SHARED IMPORTED GLOBAL)
set_target_properties(thund::duckdb PROPERTIES IMPORTED_LOCATION "${THUND_DUCKDB_DIR}/libduckdb.so")
target_include_directories(thund::duckdb SYSTEM INTERFACE "${THUND_DUCKDB_DIR}/include")

set(CMAKE_BUILD_RPATH "${THUND_PYARROW_DIR};${THUND_DUCKDB_DIR}")
set(CMAKE_INSTALL_RPATH "${THUND_PYARROW_DIR};${THUND_DUCKDB_DIR}")

find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)
find_package(GTest REQUIRED)

# xxHash (Debian libxxhash-dev): checksums of checkpoint files and the row
# hashes of incremental checkpoints (src/engine/checkpoint/).
find_path(THUND_XXHASH_INCLUDE xxhash.h REQUIRED)
find_library(THUND_XXHASH_LIB xxhash REQUIRED)
add_library(thund::xxhash UNKNOWN IMPORTED GLOBAL)
set_target_properties(thund::xxhash PROPERTIES IMPORTED_LOCATION "${THUND_XXHASH_LIB}")
target_include_directories(thund::xxhash SYSTEM INTERFACE "${THUND_XXHASH_INCLUDE}")

# gRPC + protobuf (Debian libgrpc++-dev, protobuf-compiler-grpc): the Spark
# backend's Spark Connect client (src/backend/spark/). Stubs are generated at
# build time from thund's own minimal .proto (src/backend/spark/proto/).
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_program(THUND_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
