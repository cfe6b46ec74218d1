/* The baseline of process_start_bench: the least a program can do to answer one key from a shard, as a process.
 * It opens the environment read-only, begins a read transaction, opens the data table and reads the key given in
 * hex (the LMDB key bytes, which the bench takes from the shard), printing the stored bytes. No config, no
 * plugins, no decoding: what `planb lookup` costs beyond this is what the issue asks to shrink. */
#include <lmdb.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: minimal_lmdb_get SHARD_DIR KEY_HEX\n");
    return 2;
  }
  unsigned char key[511];
  const size_t n = strlen(argv[2]) / 2;
  if (n == 0 || n > sizeof key || strlen(argv[2]) % 2 != 0) {
    fprintf(stderr, "minimal_lmdb_get: KEY_HEX must be 2 to %zu hex digits\n", 2 * sizeof key);
    return 2;
  }
  for (size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    if (sscanf(argv[2] + 2 * i, "%2x", &v) != 1) return 2;
    key[i] = (unsigned char)v;
  }
  MDB_env* env = NULL;
  MDB_txn* txn = NULL;
  MDB_dbi dbi = 0;
  if (mdb_env_create(&env) != 0 || mdb_env_set_maxdbs(env, 16) != 0 ||
      mdb_env_open(env, argv[1], MDB_RDONLY, 0) != 0 || mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0 ||
      mdb_dbi_open(txn, "data", 0, &dbi) != 0) {
    fprintf(stderr, "minimal_lmdb_get: cannot open %s\n", argv[1]);
    return 2;
  }
  MDB_val k = {n, key};
  MDB_val v;
  const int rc = mdb_get(txn, dbi, &k, &v);
  if (rc == 0) {
    fwrite(v.mv_data, 1, v.mv_size, stdout);
    putchar('\n');
  }
  mdb_txn_abort(txn);
  mdb_env_close(env);
  return rc == 0 ? 0 : 1;
}
