# `cmake --install build --prefix P` lays out a self-contained thund:
#   P/bin/thund                         (RUNPATH $ORIGIN/../lib: the prefix can move)
#   P/lib/libarrow*.so.2600, libparquet.so.2600, libduckdb.so
#   P/lib/thund/duckdb/extensions/...   DuckDB's httpfs extension (s3:// through DuckDB)
#   P/share/thund/python/thund_sdp/     the loader of Python SDP files
#   P/share/bash-completion/completions/thund, P/share/zsh/site-functions/_thund,
#   P/share/fish/vendor_completions.d/thund.fish
# The binary finds the share/ and lib/thund/ files next to itself
# (src/ir/installed_files.h) before the source-tree paths compiled in. System
# libraries (yaml-cpp, gRPC, protobuf, fmt, xxhash, libstdc++) are not bundled:
# the target machine needs the Debian packages scripts/bootstrap.sh lists.

set_target_properties(thund PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
install(TARGETS thund RUNTIME DESTINATION bin)

set(_thund_bundled)
foreach(t thund::arrow thund::arrow_compute thund::parquet thund::arrow_acero thund::arrow_dataset
          thund::arrow_s3 thund::duckdb)
  get_target_property(_loc ${t} IMPORTED_LOCATION)
  list(APPEND _thund_bundled "${_loc}")
endforeach()
install(FILES ${_thund_bundled} DESTINATION lib)

set(_httpfs "${THUND_DUCKDB_DIR}/extensions/v1.4.4/linux_amd64/httpfs.duckdb_extension")
if(EXISTS "${_httpfs}")
  install(FILES "${_httpfs}" DESTINATION lib/thund/duckdb/extensions/v1.4.4/linux_amd64)
endif()
# Every module of the loader (it imports its siblings: flatten, spark_*).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/python/thund_sdp/"
        DESTINATION share/thund/python/thund_sdp
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

# Shell completion scripts, printed at install time by the installed binary from
# its own command tree (`thund completion SHELL`), so they cannot go stale.
install(CODE [[
  set(_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  foreach(_pair "bash;share/bash-completion/completions/thund" "zsh;share/zsh/site-functions/_thund"
                "fish;share/fish/vendor_completions.d/thund.fish")
    list(GET _pair 0 _shell)
    list(GET _pair 1 _file)
    get_filename_component(_dir "${_root}/${_file}" DIRECTORY)
    file(MAKE_DIRECTORY "${_dir}")
    message(STATUS "Installing: ${_root}/${_file}")
    execute_process(COMMAND "${_root}/bin/thund" completion ${_shell} -o "${_root}/${_file}"
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "thund completion ${_shell} failed (${_rc})")
    endif()
  endforeach()
]])
