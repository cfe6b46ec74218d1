#include "host/export/mmdb_file.h"

#include "host/export/mmdb_data_encoder.h"

namespace planb {
namespace {

constexpr char kMetadataMarker[] = "\xAB\xCD\xEFMaxMind.com";

void Key(const char* name, std::string* out) { AppendMmdbString(name, out); }

}  // namespace

Status AssembleMmdb(const MmdbSearchTree& tree, const std::string& data, const std::vector<uint32_t>& data_offsets,
                    const MmdbMetadata& metadata, std::string* out) {
  const uint64_t largest = uint64_t{tree.node_count()} + 16 + data.size();
  uint32_t record_size = 0;
  if (largest < (uint64_t{1} << 24)) {
    record_size = 24;
  } else if (largest < (uint64_t{1} << 28)) {
    record_size = 28;
  } else if (largest < (uint64_t{1} << 32)) {
    record_size = 32;
  } else {
    return Status::Invalid(std::to_string(tree.node_count()) + " tree nodes and " + std::to_string(data.size()) +
                           " bytes of records are more than a MaxMind DB file addresses (2^32 with 32-bit records)");
  }
  out->clear();
  tree.Write(record_size, data_offsets, out);
  out->append(16, '\0');
  out->append(data);
  out->append(kMetadataMarker, sizeof kMetadataMarker - 1);
  AppendMmdbControl(MmdbType::kMap, 9, out);
  Key("binary_format_major_version", out);
  AppendMmdbUnsigned(MmdbType::kUint16, 2, out);
  Key("binary_format_minor_version", out);
  AppendMmdbUnsigned(MmdbType::kUint16, 0, out);
  Key("build_epoch", out);
  AppendMmdbUnsigned(MmdbType::kUint64, metadata.build_epoch, out);
  Key("database_type", out);
  AppendMmdbString(metadata.database_type, out);
  Key("description", out);
  AppendMmdbControl(MmdbType::kMap, 1, out);
  Key("en", out);
  AppendMmdbString(metadata.description, out);
  Key("ip_version", out);
  AppendMmdbUnsigned(MmdbType::kUint16, metadata.ip_version, out);
  Key("languages", out);
  AppendMmdbControl(MmdbType::kArray, 1, out);
  AppendMmdbString("en", out);
  Key("node_count", out);
  AppendMmdbUnsigned(MmdbType::kUint32, tree.node_count(), out);
  Key("record_size", out);
  AppendMmdbUnsigned(MmdbType::kUint16, record_size, out);
  return Status::Ok();
}

}  // namespace planb
