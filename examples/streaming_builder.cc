// Builds a streaming pipeline with the C++ API (the IR is the builder), checks
// it, and prints it as a pipeline file.
//
//   clicks (file drop, JSON)  ->  clicks_clean (streaming table, expectations)
//                             ->  clicks_per_minute (tumbling 1m window, watermark 10s;
//                                                    late clicks -> clicks_late)
//   users_cdc (generator)     ->  users (AUTO CDC, SCD type 2)
#include <iostream>

#include <arrow/type.h>

#include "thund/ir.h"
#include "thund/pipeline_file.h"
#include "thund/validate.h"

int main() {
  using namespace thund;

  auto click_schema = arrow::schema({
      arrow::field("user_id", arrow::int64(), /*nullable=*/false),
      arrow::field("url", arrow::utf8()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
  });

  Pipeline p("clickstream");
  p.WithStorage("/tmp/thund-clickstream");

  p.Add(Dataset::StreamingTable("clicks").WithSchema(click_schema).WithComment("raw clicks as they land"));
  p.Add(Flow::FromSource("clicks_ingest", "clicks",
                         FileSource{"data/clicks/", FileFormat::kJson, /*file_drop=*/true,
                                    {{"bad_rows", "dead_letter"}}}));

  p.Add(Dataset::StreamingTable("clicks_clean")
            .WithSchema(click_schema)
            .WithExpectation({"has_user", "user_id IS NOT NULL", ExpectationAction::kDrop, {}})
            .WithExpectation({"https_only", "url LIKE 'https://%'", ExpectationAction::kWarn, {}}));
  p.Add(Flow("clicks_clean", "clicks_clean", "SELECT user_id, url, ts FROM STREAM(clicks)")
            // No mode: the run's default applies (thund run --streaming-mode).
            .WithStreaming({std::nullopt, Trigger::ProcessingTime(5000), OutputMode::kAppend,
                            Watermark{"ts", 10'000, std::nullopt}, std::nullopt, "",
                            std::nullopt}));

  auto per_minute_schema = arrow::schema({
      arrow::field("window_start", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("window_end", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("clicks", arrow::int64()),
  });
  p.Add(Dataset::StreamingTable("clicks_per_minute").WithSchema(per_minute_schema));
  // Clicks that arrive after the watermark passed them (incremental mode) are
  // kept here, with the flow's name and the watermark at arrival.
  p.Add(Dataset::StreamingTable("clicks_late").WithComment("late clicks of clicks_per_minute"));
  p.Add(Flow("clicks_per_minute", "clicks_per_minute",
             "SELECT window_start, window_end, count(*) AS clicks FROM STREAM(clicks_clean) "
             "GROUP BY window_start, window_end")
            .WithStreaming({StreamingMode::kIncremental, Trigger::ProcessingTime(5000),
                            OutputMode::kAppend, Watermark{"ts", 10'000, 60'000},
                            WindowSpec::Tumbling("ts", 60'000), "clicks_late", std::nullopt}));

  p.Add(Dataset::StreamingTable("users"));
  GeneratorSource users_feed;
  users_feed.kind = GeneratorKind::kKeyedEvents;
  users_feed.seed = 42;
  users_feed.total_rows = 10'000;
  p.Add(Flow::FromSource("users_changes", "users", users_feed)
            .WithCdc({{"key"}, "seq", "op = 'DELETE'", {"op"}, 2}));

  Diagnostics problems = Validate(p);
  for (const auto& d : problems) std::cerr << d.ToString() << "\n";
  if (HasErrors(problems)) return 1;
  std::cout << FormatPipelineFile(p);
  return 0;
}
