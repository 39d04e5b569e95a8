// The part files of an append-only streaming dataset, kept few.
//
// Each trigger of an append-only flow adds one part file to the dataset's
// next version (the earlier parts are hard-linked). Without merging, a run of
// N triggers leaves N files, every commit links all of them and every reader
// globs them. So parts are merged like the digits of a base-kPartFanIn
// counter of triggers (Bentley and Saxe's logarithmic method): each part
// records how many triggers' rows it holds, and whenever the newest
// kPartFanIn parts hold equally many triggers they are rewritten, in order, as
// one. After T triggers a flow has at most (kPartFanIn - 1) parts per power of
// kPartFanIn — O(log T) files — and each row is rewritten at most
// log_kPartFanIn(T) times (2 times in 500 triggers, 5 in a day of one trigger
// a second). Counting triggers rather than rows keeps the rule indifferent to
// how rows vary between triggers.
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

constexpr size_t kPartFanIn = 8;

// `thund.stream.merge_parts` of `p`: true (the default) or false.
arrow::Result<bool> MergePartsEnabled(const Pipeline& p);

// True when the newest kPartFanIn of `triggers` (per part, oldest first) are equal.
bool NewestMerge(const std::vector<int64_t>& triggers);

// Merges the newest of `parts` (files in `dir`, of `flow`, oldest first)
// while NewestMerge says so: reads them, writes one file named `prefix`-m<k>-*
// in `dir` holding their triggers, deletes the files it replaced, and puts the
// new part in their place. Every read and write goes through `fs`.
arrow::Status MergeNewestParts(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                               const std::string& dir, const std::string& prefix,
                               const std::string& flow,
                               std::vector<engine::batch::PartFile>* parts);

}  // namespace thund::native
