// One entry point for every pipeline surface: what `thund check|plan|fmt PATH`
// call for any PATH.
#pragma once

#include <string>

#include "thund/pipeline_file.h"

namespace thund {

// Loads the pipeline at `path`:
//  * a .sql file                      -> LoadSqlFile (standalone SQL)
//  * spark-pipeline.yml / .yaml       -> LoadSdpProject
//  * a directory                      -> LoadSdpProject on the spec found in it
//                                        or its parents
//  * another .yaml / .yml / .json     -> an SDP spec when its content is one
//                                        (LooksLikeSdpSpec), else the pipeline
//                                        file (LoadPipelineFile)
// Anything else is one error diagnostic saying which kinds of PATH work.
ParseResult LoadPipeline(const std::string& path);

}  // namespace thund
