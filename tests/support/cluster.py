"""A sweep's local Dask cluster as a test wants it: worker threads in this process (monkeypatches reach the
tasks, and no worker process imports the package and loads its kernels again) or the real worker processes."""

from __future__ import annotations


def local_cluster(monkeypatch, processes: bool) -> None:
    """Run the sweep's local cluster (``viewer.sweep.run._client``) with worker threads or processes."""
    import viewer.sweep.run as run_mod

    real = run_mod._client

    def client(workers, scheduler, *rest):
        if processes:
            return real(workers, scheduler, *rest)
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=False, dashboard_address=None,
                               scheduler_kwargs={"dashboard_address": ":0"})
        return Client(cluster), cluster

    monkeypatch.setattr(run_mod, "_client", client)
