"""Daft's side of bench/keyed_write_bench.sh: Daft's own key-skipping write on a
local Ray, when the installed version has one.

  keyed_write_daft.py --probe            prints "ok", or why Daft cannot run
  keyed_write_daft.py SRC TARGET THREADS appends SRC's rows whose url is not in
                                         TARGET to TARGET; prints "rows=<n>"
"""
import inspect
import sys


def api():
    """The key-skipping entry point of this Daft version, or None."""
    import daft

    if hasattr(daft.DataFrame, "skip_existing"):
        return "skip_existing"
    params = inspect.signature(daft.DataFrame.write_parquet).parameters
    if "checkpoint_config" in params:
        return "checkpoint_config"
    return None


def probe():
    try:
        import daft
        import ray  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"import failed: {e}")
        return
    found = api()
    if found is None:
        print(f"daft {daft.__version__} has no skip_existing / checkpoint_config write API")
    else:
        print("ok")


def run(src, target, threads):
    import daft
    import ray

    ray.init(num_cpus=threads, include_dashboard=False, log_to_driver=False)
    daft.set_runner_ray()
    df = daft.read_parquet(src + "/*.parquet")
    found = api()
    if found == "skip_existing":
        # Key-filter actors get a small CPU share so that read/write tasks can
        # still be scheduled on this machine's few cores.
        df = df.skip_existing(target, key_column="url", file_format="parquet",
                              num_workers=threads, cpus_per_worker=0.25)
        written = df.write_parquet(target, write_mode="append")
    else:
        written = df.write_parquet(target, write_mode="append",
                                   checkpoint_config={"key_column": "url"})
    rows = 0
    for path in written.to_pydict().get("path", []):
        rows += daft.read_parquet(path).count_rows()
    print(f"rows={rows}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        probe()
    else:
        run(sys.argv[1], sys.argv[2], int(sys.argv[3]))
