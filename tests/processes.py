"""Stopping the real components the tests start as processes (ZooKeeper, Burrow, client
peers), so that none outlives its test."""

from __future__ import annotations

import subprocess


def stop_process(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds; reaped."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
