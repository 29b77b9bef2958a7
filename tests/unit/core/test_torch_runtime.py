"""cookproc.core.torch_runtime.configure_torch: the one place every torch job sets threads,
checks its device and turns on deterministic algorithms (config torch.deterministic)."""
import os

import pytest

torch = pytest.importorskip("torch")

from cookproc.core.torch_runtime import CUBLAS_WORKSPACE_CONFIG, configure_torch  # noqa: E402


@pytest.fixture(autouse=True)
def _restore(monkeypatch):
    threads = torch.get_num_threads()
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    yield
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic = False
    torch.set_num_threads(threads)


def test_deterministic_turns_on_torchs_deterministic_algorithms_and_cublas_workspace():
    configure_torch(1, "cpu", deterministic=True)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == CUBLAS_WORKSPACE_CONFIG
    configure_torch(2, "cpu", deterministic=False)
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == 2


def test_the_seed_seeds_torchs_global_generator():
    configure_torch(1, seed=7)
    first = torch.rand(3)
    configure_torch(1, seed=7)
    assert torch.equal(first, torch.rand(3))


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_a_cuda_device_without_cuda_fails_naming_the_device():
    with pytest.raises(RuntimeError, match="device cuda:1 is configured but torch sees no CUDA device"):
        configure_torch(1, "cuda:1")
