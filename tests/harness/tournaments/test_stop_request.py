"""The Ctrl-C state machine of match, tournament and bench paper (harness.records.interrupts), without signals."""

from __future__ import annotations

import signal
import threading

import pytest

from harness.records.interrupts import StopRequest, shielded, stop_on_interrupt


def test_the_first_signal_asks_the_second_forces():
    said: list[str] = []
    stop = StopRequest(grace_s=600, say=said.append)
    stop.handle(signal.SIGINT, None)
    assert stop.requested and not stop.forced and "stopping (SIGINT)" in said[0]
    with pytest.raises(KeyboardInterrupt):
        stop.handle(signal.SIGINT, None)
    assert stop.forced and "stopping now" in said[1]


def test_a_forced_stop_waits_for_the_end_of_a_shielded_block():
    stop = StopRequest(grace_s=600, say=lambda _: None)
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with shielded(stop):
            stop.handle(signal.SIGTERM, None)
            stop.handle(signal.SIGTERM, None)  # not raised here: the block is starting processes
            reached.append("end of block")
    assert reached == ["end of block"] and stop.forced
    with shielded(None):  # no stop request: nothing to shield
        pass


def test_the_grace_period_forces_the_stop_in_the_main_thread():
    said: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with stop_on_interrupt(grace_s=0.05, say=said.append) as stop:
            signal.raise_signal(signal.SIGINT)
            assert stop.requested
            threading.Event().wait(60)  # the grace timer interrupts this wait
    assert stop.forced and any("did not finish within 0.05 s" in line for line in said)


def test_the_previous_handlers_come_back():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with stop_on_interrupt(say=lambda _: None):
        assert signal.getsignal(signal.SIGINT) != before[0]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_once_settled_neither_the_grace_timer_nor_a_signal_cuts_the_wrap_up():
    said: list[str] = []
    with stop_on_interrupt(grace_s=600, say=said.append) as stop:
        signal.raise_signal(signal.SIGINT)
        stop.settle()  # the work stopped before the grace ran out
        assert stop._timer is not None
        stop._timer.join(60)  # cancelled: it ends without firing
        stop._out_of_grace()  # a timer firing just as settle() came: too late to interrupt
        stop.handle(signal.SIGINT, None)  # a second Ctrl-C during the wrap-up: said, not raised
    assert not any("did not finish" in line for line in said)
    assert said[-1].startswith("writing the last records")


def test_the_first_signal_calls_on_first_and_the_second_on_force_before_raising():
    events: list[str] = []
    stop = StopRequest(grace_s=None, say=lambda _: None, on_first=lambda: events.append("first"), on_force=lambda: events.append("force"))
    stop.handle(signal.SIGTERM, None)
    assert events == ["first"] and stop._timer is None and stop.reason() == "interrupted by SIGTERM"
    with pytest.raises(KeyboardInterrupt):
        stop.handle(signal.SIGINT, None)
    assert events == ["first", "force"]
