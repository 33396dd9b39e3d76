"""pipelines.stack_timing: every instant of a refresh's wall time goes to the first activity in progress (no stack
needed: synthetic runs)."""

from pipelines.stack_timing import CATEGORIES, RunTimes, breakdown


def _run(**intervals) -> RunTimes:
    run = RunTimes()
    for category, spans in intervals.items():
        run.intervals[category.replace("_", " ")] = spans
    run.step_seconds = sum(b - a for a, b in run.intervals["step"])
    run.steps = len(run.intervals["step"])
    return run


def test_each_instant_goes_to_the_first_activity_and_the_parts_add_up():
    """Two runs, steps overlapping across them: step time counts once in `step` and twice in `steps summed`, a task
    start hidden under the other run's step counts as step, and the time with no run is the driver's. Red when the
    categories are ranked the other way round (the queue would swallow the steps). The driver's start-up is its
    time before the first run was created: red when it counts the driver's time between runs too."""
    first = _run(queue=[(0, 1)], launch=[(1, 2)], run_worker=[(2, 10)], task_start=[(2, 3)], step=[(3, 8)])
    second = _run(queue=[(1, 2)], launch=[(2, 4)], run_worker=[(4, 12)], task_start=[(4, 6)], step=[(6, 11)])
    seconds = breakdown([first, second], -3, 14)
    assert round(sum(seconds[c] for c in CATEGORIES), 6) == 17
    assert {c: round(seconds[c], 2) for c in CATEGORIES} == {
        "step": 8, "task start": 1, "run worker": 1, "launch": 1, "queue": 1, "driver": 5}
    assert round(seconds["driver start-up"], 2) == 3
    assert seconds["steps summed"] == 10 and seconds["steps"] == 2
