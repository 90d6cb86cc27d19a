import pytest
from distributed import Client, LocalCluster


@pytest.fixture(scope="session")
def client():
    """A real Dask cluster: two worker processes of one thread."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        yield client
