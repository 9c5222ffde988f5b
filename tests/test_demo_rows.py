"""The demo's rows side by side (:func:`duplexeval.app._demo.side_by_side`), the stage seconds
they share (:func:`~duplexeval.app._demo._apportion`), and what makes two rows on one process
pool safe: the ``__main__`` hiding of worker start-up nests across threads, and a pool that an
interruption closed refuses a late run instead of starting another."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from duplexeval.app._demo import _apportion, side_by_side
from duplexeval.errors import DuplexevalError
from duplexeval.runs import ProcessExecutor
from duplexeval.speech._asr_pool import _main_not_reimported


def test_the_stages_share_the_wall_time_in_proportion_to_the_rows_seconds() -> None:
    """Two rows side by side, 100 s of wall time::

        cascade    |runs 60 ..............|analysis 20 ....|tables 10|
        reference  |runs 5|analysis 45 ......................|tables 10|
        stages     runs 65, analysis 65, tables 20 of 150 row-seconds -> x 100/150
    """
    shares = _apportion([{"runs": 60.0, "analysis": 20.0, "tables": 10.0},
                         {"runs": 5.0, "analysis": 45.0, "tables": 10.0}], 100.0)
    assert shares == pytest.approx({"runs": 65 / 1.5, "analysis": 65 / 1.5,
                                    "tables": 20 / 1.5})
    assert sum(shares.values()) == pytest.approx(100.0)
    # one row after the other: its own seconds, up to the time between rows
    assert _apportion([{"runs": 3.0, "analysis": 1.0}], 4.0) == {"runs": 3.0, "analysis": 1.0}
    assert _apportion([{"runs": 0.0}], 2.0) == {"runs": 0.0}


def test_rows_run_two_at_a_time_and_come_back_in_their_order() -> None:
    running, peak, lock = [0], [0], threading.Lock()

    def work(item: int) -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.1 if item < 2 else 0.02)  # the first items take longest
        with lock:
            running[0] -= 1
        return f"row {item}"

    assert side_by_side([0, 1, 2, 3], work, 2) == ["row 0", "row 1", "row 2", "row 3"]
    assert peak[0] == 2
    assert side_by_side([], work, 2) == []
    assert side_by_side([7], work, 1) == ["row 7"]


def test_a_failing_row_is_raised_without_waiting_for_the_other() -> None:
    released = threading.Event()

    def work(item: int) -> int:
        if item == 1:
            raise DuplexevalError("row 1 failed")
        released.wait(10)  # the other row runs on (a daemon thread)
        return item

    start = time.perf_counter()
    with pytest.raises(DuplexevalError, match="row 1 failed"):
        side_by_side([0, 1, 2], work, 2)
    assert time.perf_counter() - start < 5
    released.set()


def test_hiding_main_nests_across_threads() -> None:
    """Two threads start workers at once: ``__main__`` has no spec while either is inside,
    and gets its own back when the last leaves."""
    main = sys.modules["__main__"]
    had_file = hasattr(main, "__file__")
    spec = getattr(main, "__spec__", None)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[object] = []

    def first() -> None:
        with _main_not_reimported():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with _main_not_reimported():
            second_in.set()
            first_out.wait(5)
            seen.append(main.__spec__)  # the first has left, this one is still inside
            seen.append(hasattr(main, "__file__"))

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == [None, False]
    assert getattr(main, "__spec__", None) is spec and hasattr(main, "__file__") == had_file


def test_a_pool_left_by_an_interruption_refuses_a_late_run(tmp_path: Path) -> None:
    """A row's thread that reaches its next run after Ctrl-C closed the demo's pool stops
    there; a pool left normally, or entered again, still runs (a pool for that run alone)."""
    executor = ProcessExecutor(1)
    with pytest.raises(KeyboardInterrupt), executor:
        raise KeyboardInterrupt
    with pytest.raises(DuplexevalError, match="shut down by an interruption"):
        executor.run([object()], object(), lambda task, report: None)  # type: ignore[list-item,arg-type]
    with executor:
        assert executor._pool is not None
    # left normally: not refused (the bogus task fails further on, not at the refusal)
    with pytest.raises(Exception) as failed:
        executor.run([object()], object(), lambda task, report: None)  # type: ignore[list-item,arg-type]
    assert not isinstance(failed.value, DuplexevalError)
    assert executor._pool is None
