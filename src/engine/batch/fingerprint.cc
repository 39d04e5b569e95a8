#include "engine/batch/fingerprint.h"

#include <cstdio>
#include <vector>

namespace thund::engine::batch {
namespace {

uint64_t Fnv1a(std::string_view text, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

void AppendField(std::string* out, std::string_view s) {
  *out += std::to_string(s.size());
  *out += ':';
  out->append(s.data(), s.size());
}

}  // namespace

std::string HashHex(std::string_view text) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(Fnv1a(text, 0xcbf29ce484222325ULL)),
                static_cast<unsigned long long>(Fnv1a(text, 0x84222325cbf29ce4ULL) ^
                                                (text.size() * 0x9e3779b97f4a7c15ULL)));
  return buf;
}

std::string Fingerprint::Digest() const {
  std::string canon;
  AppendField(&canon, definition);
  for (const auto& [k, v] : inputs) {
    AppendField(&canon, "i");
    AppendField(&canon, k);
    AppendField(&canon, v);
  }
  for (const auto& [k, v] : files) {
    AppendField(&canon, "f");
    AppendField(&canon, k);
    AppendField(&canon, v);
  }
  return HashHex(canon);
}

nlohmann::json Fingerprint::ToJson() const {
  nlohmann::json j;
  j["definition"] = definition;
  j["inputs"] = inputs;
  j["files"] = files;
  j["digest"] = Digest();
  return j;
}

Fingerprint Fingerprint::FromJson(const nlohmann::json& j) {
  Fingerprint f;
  if (!j.is_object()) return f;
  if (j.contains("definition") && j["definition"].is_string()) {
    f.definition = j["definition"].get<std::string>();
  }
  for (const char* key : {"inputs", "files"}) {
    if (!j.contains(key) || !j[key].is_object()) continue;
    auto& target = std::string_view(key) == "inputs" ? f.inputs : f.files;
    for (const auto& [k, v] : j[key].items()) {
      if (v.is_string()) target[k] = v.get<std::string>();
    }
  }
  return f;
}

std::string ExplainChange(const Fingerprint& before, const Fingerprint& now) {
  std::vector<std::string> reasons;
  if (before.definition != now.definition) reasons.push_back("definition changed");
  for (const auto& [name, stamp] : now.inputs) {
    auto it = before.inputs.find(name);
    if (it == before.inputs.end()) {
      reasons.push_back("new input '" + name + "'");
    } else if (it->second != stamp) {
      reasons.push_back("input '" + name + "' changed (" + it->second + " -> " + stamp + ")");
    }
  }
  for (const auto& [name, stamp] : before.inputs) {
    if (!now.inputs.count(name)) reasons.push_back("no longer reads '" + name + "'");
  }
  for (const auto& [path, stamp] : now.files) {
    auto it = before.files.find(path);
    if (it == before.files.end()) {
      reasons.push_back("new input file " + path);
    } else if (it->second != stamp) {
      reasons.push_back("input file " + path + " changed");
    }
  }
  for (const auto& [path, stamp] : before.files) {
    if (!now.files.count(path)) reasons.push_back("input file " + path + " is gone");
  }
  std::string out;
  for (size_t i = 0; i < reasons.size() && i < 3; ++i) {
    if (i) out += "; ";
    out += reasons[i];
  }
  if (reasons.size() > 3) out += "; and " + std::to_string(reasons.size() - 3) + " more";
  return out;
}

}  // namespace thund::engine::batch
