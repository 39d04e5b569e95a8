// The part files of an append-only streaming dataset, kept few.
//
// Each trigger of an append-only flow adds one part file to the dataset's
// next version (the earlier parts are hard-linked). Without merging, a run of
// N triggers leaves N files, every commit links all of them and every reader
// globs them. So the newest parts are merged the way a binary counter carries
// (Bentley and Saxe's logarithmic method): after a trigger adds its part, the
// newest parts are rewritten as one while the part before them holds fewer
// than twice their rows. Between triggers every part then holds at least
// twice the rows of the next newer one: a dataset of R rows has at most
// log2(R / smallest part) + 1 parts, and each rewrite of a row puts it in a
// part at least 1.5 times larger, so a row is rewritten O(log R) times. Trigger
// sizes may vary: the rule looks at rows, not at counts of parts.
//
// Row order is kept (the merged part stands where its parts stood), which the
// flows reading the dataset by row offset rely on.
//
// The switch: configuration `thund.stream.merge_parts` (default true; false
// keeps one part per trigger, the plain twin the tests compare against).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>
#include <arrow/status.h>

#include "engine/batch/version_manifest.h"
#include "thund/ir.h"

namespace thund::native {

// `thund.stream.merge_parts` of `p`: true (the default) or false.
arrow::Result<bool> MergePartsEnabled(const Pipeline& p);

// How many of the newest parts (rows per part, oldest first) are merged into
// one: 0 or 1 means none.
size_t NewestToMerge(const std::vector<int64_t>& rows);

// Merges the newest of `parts` (files in `dir`, of `flow`, oldest first) as
// NewestToMerge says: reads them, writes one file named `prefix`-m-* in `dir`,
// deletes the files it replaced, and puts the new part in their place. Every
// read and write goes through `fs`.
arrow::Status MergeNewestParts(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                               const std::string& dir, const std::string& prefix,
                               const std::string& flow,
                               std::vector<engine::batch::PartFile>* parts);

}  // namespace thund::native
