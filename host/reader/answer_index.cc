#include "host/reader/answer_index.h"

#include <lmdb.h>

#include "host/reader/point_answer_index.h"
#include "host/reader/range_answer_index.h"

namespace planb {

uint64_t LastCommittedTxnId(const MapEnv& env) {
  MDB_envinfo info;
  mdb_env_info(env.env(), &info);
  return info.me_last_txnid;
}

ReadIndexKind ReadIndexKindOf(const MapPlugins& plugins) {
  if (RangeAnswerIndex::Eligible(plugins)) return ReadIndexKind::kRange;
  if (PointAnswerIndex::Eligible(plugins)) return ReadIndexKind::kPoint;
  return ReadIndexKind::kNone;
}

Status BuildAnswerIndex(std::shared_ptr<MapEnv> env, uint64_t max_bytes, const std::atomic<bool>* stop,
                        std::shared_ptr<const AnswerIndex>* out) {
  out->reset();
  if (ReadIndexKindOf(env->plugins()) == ReadIndexKind::kPoint) {
    std::shared_ptr<const PointAnswerIndex> point;
    PLANB_RETURN_IF_ERROR(PointAnswerIndex::Build(std::move(env), max_bytes, stop, &point));
    *out = std::move(point);
    return Status::Ok();
  }
  std::shared_ptr<const RangeAnswerIndex> range;  // kNotSupported, naming the map, when it cannot have one either
  PLANB_RETURN_IF_ERROR(RangeAnswerIndex::Build(std::move(env), max_bytes, &range));
  *out = std::move(range);
  return Status::Ok();
}

}  // namespace planb
