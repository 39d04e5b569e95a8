// TopoOrder(): dependency order, deterministic tie-breaking, cycles. The
// oracle is independent of Kahn's algorithm: every edge must be respected, and
// at every step the chosen flow must be the smallest name among the flows
// whose writers have all run (checked by brute force over the prefix).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ir/validate_test_util.h"

namespace thund {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Names(const std::vector<const Flow*>& flows) {
  std::vector<std::string> out;
  for (const auto* f : flows) out.push_back(f->name);
  return out;
}

// Flows `g` must wait for: every flow writing a dataset g reads.
std::vector<std::string> Upstream(const Pipeline& p, const Flow& g) {
  std::vector<std::string> out;
  auto inputs = FlowInputs(p, g);
  EXPECT_TRUE(inputs.ok());
  for (const auto& in : *inputs) {
    for (const auto& f : p.flows) {
      if (f.target == in) out.push_back(f.name);
    }
  }
  return out;
}

void CheckOrderBruteForce(const Pipeline& p, const std::vector<std::string>& order) {
  ASSERT_EQ(order.size(), p.flows.size());
  std::set<std::string> done;
  for (size_t k = 0; k < order.size(); ++k) {
    // Ready = not done and all upstream done.
    std::string smallest_ready;
    for (const auto& f : p.flows) {
      if (done.count(f.name)) continue;
      auto up = Upstream(p, f);
      bool ready = std::all_of(up.begin(), up.end(),
                               [&](const std::string& u) { return done.count(u) > 0; });
      if (ready && (smallest_ready.empty() || f.name < smallest_ready)) smallest_ready = f.name;
    }
    EXPECT_EQ(order[k], smallest_ready) << "step " << k;
    done.insert(order[k]);
  }
}

// A layered DAG: 6 sources, then datasets reading 1..3 earlier ones.
Pipeline RandomDag(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  Pipeline p("dag");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    std::string name = "d" + std::to_string((i * 7919 + seed) % 1000) + "_" + std::to_string(i);
    std::string sql = "SELECT 1 AS k";
    if (i >= 6) {
      int reads = 1 + static_cast<int>(rng() % 3);
      sql = "SELECT * FROM " + names[rng() % names.size()];
      for (int r = 1; r < reads; ++r) {
        sql += " JOIN " + names[rng() % names.size()] + " USING (k)";
      }
    }
    p.AddQuery(Dataset::MaterializedView(name), sql);
    names.push_back(name);
  }
  return p;
}

TEST(TopoOrder, SimpleChainAndTies) {
  Pipeline p("p");
  p.AddQuery(Dataset::MaterializedView("c"), "SELECT * FROM b");
  p.AddQuery(Dataset::MaterializedView("b"), "SELECT * FROM a");
  p.AddQuery(Dataset::MaterializedView("z"), "SELECT 1 AS k");
  p.AddQuery(Dataset::MaterializedView("a"), "SELECT 1 AS k");
  auto order = TopoOrder(p);
  ASSERT_TRUE(order.ok()) << order.status();
  // Ready at start: a, z -> a; then b becomes ready and b < z.
  EXPECT_EQ(Names(*order), (std::vector<std::string>{"a", "b", "c", "z"}));
  EXPECT_EQ((*order)[0], &p.flows[3]);  // pointers into p.flows
}

TEST(TopoOrder, ViewsAndSeveralWritersAreEdges) {
  Pipeline p("p");
  p.Add(Dataset::StreamingTable("s"));
  p.Add(Flow::FromSource("s_b", "s", MemorySource{"b"}));
  p.Add(Flow::FromSource("s_a", "s", MemorySource{"a"}));
  p.AddQuery(Dataset::View("v"), "SELECT * FROM s");
  p.AddQuery(Dataset::MaterializedView("a_report"), "SELECT * FROM v");
  auto order = TopoOrder(p);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(Names(*order), (std::vector<std::string>{"s_a", "s_b", "v", "a_report"}));
}

TEST(TopoOrder, DeterministicUnderShuffleAndMatchesBruteForce) {
  for (uint32_t dag_seed : {1u, 2u, 3u}) {
    Pipeline p = RandomDag(dag_seed, 30);
    auto base = TopoOrder(p);
    ASSERT_TRUE(base.ok()) << base.status();
    std::vector<std::string> expected = Names(*base);
    CheckOrderBruteForce(p, expected);
    for (uint32_t shuffle_seed = 0; shuffle_seed < 8; ++shuffle_seed) {
      Pipeline q = p;
      std::mt19937 rng(shuffle_seed);
      std::shuffle(q.flows.begin(), q.flows.end(), rng);
      std::shuffle(q.datasets.begin(), q.datasets.end(), rng);
      auto order = TopoOrder(q);
      ASSERT_TRUE(order.ok());
      EXPECT_EQ(Names(*order), expected) << "dag " << dag_seed << " shuffle " << shuffle_seed;
    }
  }
}

TEST(TopoOrder, CycleNamesItsMembers) {
  Pipeline p("p");
  p.AddQuery(Dataset::MaterializedView("ok"), "SELECT 1 AS k");
  p.AddQuery(Dataset::MaterializedView("a"), "SELECT * FROM c JOIN ok USING (k)");
  p.AddQuery(Dataset::MaterializedView("b"), "SELECT * FROM a");
  p.AddQuery(Dataset::MaterializedView("c"), "SELECT * FROM b");
  p.AddQuery(Dataset::MaterializedView("after"), "SELECT * FROM c");
  auto order = TopoOrder(p);
  ASSERT_FALSE(order.ok());
  EXPECT_TRUE(order.status().IsInvalid());
  EXPECT_THAT(order.status().message(), HasSubstr("a -> b -> c -> a"));
  EXPECT_THAT(order.status().message(), ::testing::Not(HasSubstr("after")));
}

TEST(TopoOrder, SelfReadIsACycle) {
  Pipeline p("p");
  p.AddQuery(Dataset::MaterializedView("a"), "SELECT * FROM a");
  auto order = TopoOrder(p);
  ASSERT_FALSE(order.ok());
  EXPECT_THAT(order.status().message(), HasSubstr("a -> a"));
}

TEST(TopoOrder, BadSqlNamesTheFlow) {
  Pipeline p("p");
  p.AddQuery(Dataset::MaterializedView("a"), "SELECT FROM WHERE");
  auto order = TopoOrder(p);
  ASSERT_FALSE(order.ok());
  EXPECT_THAT(order.status().message(), HasSubstr("flow 'a'"));
}

TEST(TopoOrder, EmptyPipeline) {
  auto order = TopoOrder(Pipeline("empty"));
  ASSERT_TRUE(order.ok());
  EXPECT_TRUE(order->empty());
}

}  // namespace
}  // namespace thund
