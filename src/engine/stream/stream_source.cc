#include "engine/stream/stream_source.h"

#include <type_traits>

#include "engine/stream/file_drop_source.h"
#include "engine/stream/generator_source.h"
#include "engine/stream/memory_source.h"

namespace thund::engine::stream {

arrow::Result<std::unique_ptr<StreamSource>> MakeStreamSource(const SourceSpec& spec,
                                                              const StreamSourceContext& ctx) {
  const std::string flow = ctx.flow != nullptr ? ctx.flow->name : std::string("?");
  return std::visit(
      [&](const auto& s) -> arrow::Result<std::unique_ptr<StreamSource>> {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, FileSource>) {
          if (!s.file_drop) {
            return arrow::Status::Invalid(
                "flow '", flow, "': the file source '", s.path,
                "' is read once (a batch source), not as a stream; declare it as a file drop "
                "to take new files per trigger");
          }
          return FileDropSource::Make(s, ctx);
        } else if constexpr (std::is_same_v<T, GeneratorSource>) {
          return GeneratorStreamSource::Make(s, ctx);
        } else if constexpr (std::is_same_v<T, MemorySource>) {
          return MemoryStreamSource::Make(s, ctx);
        } else {
          return arrow::Status::NotImplemented(
              "flow '", flow, "': ", SourceKindName(SourceSpec(s)),
              " sources are not supported by the native streaming engine yet");
        }
      },
      spec);
}

}  // namespace thund::engine::stream
