#include "host/storage/verify_job.h"

#include <cstdint>
#include <limits>

#include "host/common/log_text.h"
#include "host/common/numbers.h"

namespace planb {
namespace {

constexpr const char* kMapFlag = "--map";
// A map section has a handful of options; this only keeps a malformed count from reserving memory.
constexpr uint64_t kMaxOptions = 1024;

// Reads the job's arguments in order; every error names the argument by position and by what it should be.
class ArgReader {
 public:
  explicit ArgReader(const std::vector<std::string>& args) : args_(args) {}

  bool done() const { return next_ >= args_.size(); }

  Status Text(const char* what, std::string* out) {
    if (done()) return Status::Invalid("verifier arguments: " + std::string(what) + " is missing");
    *out = args_[next_++];
    return Status::Ok();
  }

  Status Count(const char* what, uint64_t max, uint64_t* out) {
    std::string text;
    PLANB_RETURN_IF_ERROR(Text(what, &text));
    if (!ParseCount(text, max, out)) {
      return Status::Invalid("verifier arguments: " + std::string(what) + " '" + LogValue(text) +
                             "' is not a count up to " + std::to_string(max));
    }
    return Status::Ok();
  }

 private:
  const std::vector<std::string>& args_;
  size_t next_ = 0;
};

}  // namespace

std::vector<std::string> EncodeVerifyJob(const VerifyJob& job) {
  std::vector<std::string> args{job.dir};
  for (const VerifyMapJob& map : job.maps) {
    const MapConfig& c = map.config;
    args.insert(args.end(),
                {kMapFlag, c.name, c.type, c.scheme, map.type_file, map.scheme_file, std::to_string(c.max_store_size),
                 std::to_string(c.max_readers), std::to_string(c.plugin_options.size())});
    for (const auto& [key, value] : c.plugin_options) args.insert(args.end(), {key, value});
  }
  return args;
}

Status DecodeVerifyJob(const std::vector<std::string>& args, VerifyJob* job) {
  ArgReader reader(args);
  *job = VerifyJob();
  PLANB_RETURN_IF_ERROR(reader.Text("the directory", &job->dir));
  if (job->dir.empty()) return Status::Invalid("verifier arguments: the directory is empty");
  while (!reader.done()) {
    std::string flag;
    PLANB_RETURN_IF_ERROR(reader.Text("--map", &flag));
    if (flag != kMapFlag) {
      return Status::Invalid("verifier arguments: expected --map, got '" + LogValue(flag) + "'");
    }
    VerifyMapJob map;
    MapConfig& c = map.config;
    PLANB_RETURN_IF_ERROR(reader.Text("the map's name", &c.name));
    if (!IsValidMapName(c.name)) return Status::Invalid("verifier arguments: bad map name '" + LogValue(c.name) + "'");
    PLANB_RETURN_IF_ERROR(reader.Text("the map's type", &c.type));
    PLANB_RETURN_IF_ERROR(reader.Text("the map's scheme", &c.scheme));
    PLANB_RETURN_IF_ERROR(reader.Text("the type's plugin file", &map.type_file));
    PLANB_RETURN_IF_ERROR(reader.Text("the scheme's plugin file", &map.scheme_file));
    if (c.type.empty() || map.type_file.empty()) {
      return Status::Invalid("verifier arguments: map '" + c.name + "' has no type or no type plugin file");
    }
    uint64_t number = 0;
    PLANB_RETURN_IF_ERROR(reader.Count("max_store_size", std::numeric_limits<uint64_t>::max(), &number));
    c.max_store_size = number;
    PLANB_RETURN_IF_ERROR(reader.Count("max_readers", std::numeric_limits<uint32_t>::max(), &number));
    c.max_readers = static_cast<uint32_t>(number);
    uint64_t options = 0;
    PLANB_RETURN_IF_ERROR(reader.Count("the option count", kMaxOptions, &options));
    for (uint64_t i = 0; i < options; ++i) {
      std::string key, value;
      PLANB_RETURN_IF_ERROR(reader.Text("an option's name", &key));
      PLANB_RETURN_IF_ERROR(reader.Text("an option's value", &value));
      c.plugin_options.emplace_back(std::move(key), std::move(value));
    }
    job->maps.push_back(std::move(map));
  }
  if (job->maps.empty()) return Status::Invalid("verifier arguments: no map to check");
  return Status::Ok();
}

}  // namespace planb
