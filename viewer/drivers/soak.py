"""A soak: many frames of a moving world without rendering, through the frame's own update stage, each
frame's visible set checked against brute force at intervals and the memory reported as it goes
(``viewer soak``).

Each frame is a :class:`viewer.frame.FramePipeline` frame up to its query: :meth:`~viewer.frame.FramePipeline.update`
puts the camera at the frame's pose and advances the movers (the world's step, then ``move_many`` in the
culling mode's index, as the window's frames do), then the index is asked at the camera and the pipeline's
visibility events turn the answer into entered / left. The cull and the gather are not run: a soak checks
what moves and what is found, and its frame times are of that work alone.

Typical use::

    from viewer.drivers.soak import run_soak
    status = run_soak(lambda: scene, lambda scene: poses, index="octree", frames=2000, dt=1 / 60)
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from typing import Callable

import numpy as np

from ..camera import FlyCamera
from ..errors import UserError

__all__ = ["ENTRY_POINTS", "check_index", "generated_poses", "rss_bytes", "run_soak", "soak"]

#: what a soak runs of an index (a build, then queries and moves every frame): a single insert, remove or
#: move, or a batch of points, is not compiled
ENTRY_POINTS = ("build", "query", "move_many")


def check_index(name: str) -> str:
    """The label of ``name``, one index spec (:mod:`viewer.index.specs`); a :class:`UserError` naming
    ``--index`` when it does not resolve and build, names several, or is not available here."""
    from ..index import parse_index_list

    specs = parse_index_list(name)
    if len(specs) > 1:
        raise UserError(f"--index {name}: a soak runs one index; give one")
    why = specs[0].cls.unavailable()
    if why:
        raise UserError(f"--index {name}: not available here: {why}")
    return specs[0].label


def rss_bytes() -> int:
    """The process's resident set size now, bytes (Linux /proc; elsewhere the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _mib(b: int) -> str:
    return f"{b / 2**20:.1f} MiB"


def run_soak(load_scene: Callable[[], object], poses: Callable[[object], np.ndarray], *, index: str, frames: int,
             dt: float, check_every: int = 100, report_every: int = 10_000,
             hysteresis: tuple[float, bool] = (0.0, False), time_limit: float | None = None, quiet: bool = False,
             scene_arg: str = "SCENE") -> int:
    """Soak ``index`` in the moving world ``load_scene()`` for ``frames`` frames of ``dt`` seconds; returns
    the exit status (0: every checked frame matched; 1: a mismatch or a broken index invariant; 130: stopped
    by Ctrl-C).

    poses : ``poses(scene)`` -> (F, 5) float64 ``(x, y, z, yaw, pitch)`` camera poses, flown back and forth
        (frame ``f`` at pose ``f`` while ``f < F``, then back along them, no jump at the ends)
    check_every, report_every : frames between checks against brute force / memory lines on stderr
    hysteresis : the events' ``(margin, relative)`` (:class:`viewer.frame.events.VisibilityTracker`)
    time_limit : seconds of wall time after which the run stops, reporting the frames done
    scene_arg : how the user named the scene (for messages)

    Prints progress to stderr (unless ``quiet``), the summary, the memory line and the machine line to
    stdout. The scene is loaded, its movers checked and the kernels compiled (reported on stderr) before the
    poses are asked for, inside one warm-up scope (:func:`viewer.index.warm_scope`: only
    :data:`ENTRY_POINTS` are compiled).
    """
    from ..index import warm_scope

    with warm_scope(ENTRY_POINTS):
        index = check_index(index)
        scene = load_scene()
        return _Soak(scene, index, hysteresis, quiet, scene_arg).run(
            poses(scene), frames=frames, dt=dt, check_every=check_every, report_every=report_every,
            time_limit=time_limit)


def soak(scene: str, import_options: dict[str, str | None] | None = None, *, index: str, frames: int, dt: float,
         check_every: int = 100, report_every: int = 10_000, hysteresis: tuple[float, bool] = (0.0, False),
         time_limit: float | None = None, quiet: bool = False) -> int:
    """``viewer soak``: :func:`run_soak` of ``index`` in the scene ``scene`` names (a recipe, a ``.npz``, a bundled
    name or a file imported with ``import_options``: :func:`viewer.scenes.loading.open_scene`), the camera on its
    generated fly-through (:func:`generated_poses`). Returns the exit status."""
    from ..scenes.loading import open_scene

    return run_soak(lambda: open_scene(scene, import_options, quiet=quiet),
                    lambda world: generated_poses(world, index, frames, dt), index=index, frames=frames, dt=dt,
                    check_every=check_every, report_every=report_every, hysteresis=hysteresis,
                    time_limit=time_limit, quiet=quiet, scene_arg=scene)


def generated_poses(scene, index: str, frames: int, dt: float) -> np.ndarray:
    """The camera's poses, (F, 5) float64: ``scene``'s generated fly-through (probed with the index spec
    ``index``: :func:`viewer.paths.probe_index`) sampled at ``dt``, at most ``frames`` of them; a
    :class:`UserError` naming ``--dt`` when that would be too many poses."""
    from ..paths import generated_path, probe_index
    from .frames import MAX_FRAMES, over_limit, sampled_frames

    path = generated_path(scene, index=probe_index([index]))
    # the path at --dt, but never more poses than the run has frames (it loops back and forth only when
    # the path is the shorter): a tiny --dt is a slow camera, not a sampling of billions of poses
    path_frames = sampled_frames(path.duration, dt)
    if path_frames > MAX_FRAMES:  # --frames is how long the soak runs: only --dt fixes this
        raise UserError(
            f"--dt {dt:g}: the generated path lasts {path.duration:.4g} s, which at --dt {dt:g} s per "
            f"frame is {over_limit(path_frames, 'poses')}; give a larger --dt (--frames sets how many frames "
            "the soak runs, not how finely the path is sampled)")
    if path_frames > frames:
        samples = path.sample(frames=frames, dt=dt)
    else:
        samples = path.sample(dt=dt)
    return np.column_stack([samples.positions, samples.yaw, samples.pitch])


class _Soak:
    """One soak's frame pipeline and bookkeeping (see :func:`run_soak`)."""

    def __init__(self, scene, index: str, hysteresis: tuple[float, bool], quiet: bool, scene_arg: str) -> None:
        from ..frame.events import warm as warm_events
        from ..frame.motion import MotionState, warm as warm_motion
        from ..index import warm_up
        from ..kernels.compile import reporting

        movers = MotionState.from_scene(scene)  # checked before anything compiles; the pipeline has its own
        if movers is None:
            if (scene.recipe or {}).get("import"):  # glTF, PLY, CSV, Parquet: placements, never motion
                raise UserError(f"{scene_arg}: an imported file has no moving objects, nothing would move (soak "
                                "runs a recipe with a [motion] table, e.g. dynamic-100k)")
            raise UserError(f"{scene_arg}: the scene has no [motion] table, nothing would move (try dynamic-100k)")
        if not movers.ids.size:
            raise UserError(f"{scene_arg}: field 'motion.share' moves none of its {len(scene.centres):,} objects, "
                            "nothing would move (try dynamic-100k)")
        del movers
        self.scene, self.index_name, self.hysteresis = scene, index, hysteresis
        self.say = (lambda *a: None) if quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
        with reporting(sys.stderr, enabled=not quiet):  # a first run says that it compiles (not in the build time)
            warm_motion()
            warm_events()
            warm_up([index])

    def run(self, cams: np.ndarray, *, frames: int, dt: float, check_every: int, report_every: int,
            time_limit: float | None) -> int:
        from ..frame.pipeline import FramePipeline
        from ..index import grown_until_fits, make_index
        from ..system.machine import machine, machine_line
        from ..timing.heap import FrameCollector, settle

        scene, name, say = self.scene, self.index_name, self.say
        cams = np.ascontiguousarray(cams, dtype=np.float64).reshape(-1, 5)
        f_path = len(cams)
        # the frame owner: its update moves the camera and the world (the movers' step, move_many in the
        # index); one culler, no cycle
        frame = FramePipeline(scene, name, indexes=[name], hysteresis=self.hysteresis)
        state, tracker, index = frame.motion, frame.events, frame.index
        build_s = frame.build_s[name]
        camera = FlyCamera()
        margin, relative = self.hysteresis
        out = np.empty(4096, dtype=np.int64)
        node_count = lambda: getattr(index, "node_count", None)  # noqa: E731

        settle()  # the setup's objects out of the collector's scans: no frame pays for walking them
        rss0, nb0 = rss_bytes(), index.nbytes()
        say(f"{scene.name}: {scene.n} objects, {state.m} moving; index {name} built in {build_s:.2f} s; "
            f"{frames} frames at dt {dt:.4g} s, path {f_path} frames (looped back and forth); "
            f"check every {check_every}, hysteresis {tracker.hysteresis}")
        say(f"frame 0: RSS {_mib(rss0)}  index {_mib(nb0)}" + (f"  nodes {node_count()}" if node_count() else ""))
        checked = 0
        mismatches: list[str] = []
        total_visible = 0
        frame_times = np.empty(frames)  # preallocated: the soak's own bookkeeping must not grow RSS
        start = time.perf_counter()
        done = 0
        period = 2 * f_path - 2 if f_path > 1 else 1
        stop = _CtrlC()  # the first Ctrl-C ends the loop after its frame; the summary below still runs
        probe_rng = np.random.default_rng(0)  # the points inside moving spheres each check adds
        with FrameCollector() as frames_gc:  # no collection inside a timed frame (viewer.timing.heap)
            try:
                for f in range(frames):
                    frames_gc.between_frames()
                    if stop.requested:
                        break
                    if time_limit and f % 256 == 0 and time.perf_counter() - start > time_limit:
                        break
                    j = f % period
                    j = j if j < f_path else period - j  # back and forth: no jump at the end of the path
                    p = cams[j, :3]
                    t_f = time.perf_counter()
                    frame.update(camera, dt, pose=cams[j])  # the camera, the movers' step, move_many
                    k, out = grown_until_fits(lambda o: index.query_into(p, o), out)
                    tracker.update(out, k, p, state.centres, state.radii)
                    frame_times[f] = time.perf_counter() - t_f
                    total_visible += k
                    done = f + 1
                    if f % check_every == 0:
                        checked += 1
                        problem = (_check(out[:k], tracker.inside(), p, state.centres, state.radii, margin, relative)
                                   or _check_inside_movers(index, state, probe_rng))
                        if problem:
                            mismatches.append(f"frame {f}: {problem}")
                            if len(mismatches) <= 5:
                                print(f"viewer soak: MISMATCH {mismatches[-1]}", file=sys.stderr)
                    if (f + 1) % report_every == 0:
                        el = time.perf_counter() - start
                        say(f"frame {f + 1}: RSS {_mib(rss_bytes())}  index {_mib(index.nbytes())}"
                            + (f"  nodes {node_count()}" if node_count() else "")
                            + f"  checked {checked}  mismatches {len(mismatches)}  {(f + 1) / el:.0f} frames/s")
            finally:
                stop.restore()
        interrupted = stop.requested
        elapsed = time.perf_counter() - start
        rss1, nb1 = rss_bytes(), index.nbytes()
        ft = frame_times[:done] * 1e3
        med = float(np.median(ft)) if ft.size else float("nan")
        p99 = float(np.percentile(ft, 99)) if ft.size else float("nan")
        print(f"soak {scene.name} ({scene.n} objects, {state.m} moving) index {name}: {done} frames in "
              f"{elapsed:.1f} s (median frame {med:.3f} ms, p99 {p99:.3f} ms); checked {checked} frames against "
              f"brute force, {len(mismatches)} mismatches; events entered {tracker.total_entered} left "
              f"{tracker.total_left} (hysteresis {tracker.hysteresis}); mean visible {total_visible / max(done, 1):.1f}")
        print(f"memory: RSS {_mib(rss0)} -> {_mib(rss1)} ({(rss1 - rss0) / 2**20:+.1f} MiB); index nbytes "
              f"{_mib(nb0)} -> {_mib(nb1)} ({nb1 - nb0:+d} bytes)"
              + (f"; nodes {node_count()}" if node_count() else ""))
        print(machine_line(machine()))  # the frame times above are this CPU's
        if interrupted:
            print(f"interrupted by Ctrl-C after {done} of {frames} frames: the figures above are of those frames")
        if node_count():
            fresh = make_index(name, state.centres.copy(), state.radii.copy())
            print(f"nodes: {node_count()} live after {done} frames; a fresh build of the world as it is now has "
                  f"{fresh.node_count} (the difference is what moves left behind, not a leak, when it stays bounded)")
            del fresh
        check = getattr(index, "check", None)
        if callable(check):
            try:
                check()
            except Exception as exc:  # an invariant of the index broke: a failure like a mismatch
                mismatches.append(f"index check: {exc}")
                print(f"viewer soak: index check failed: {exc}", file=sys.stderr)
        if mismatches:
            return 1
        if interrupted:
            print("viewer soak: interrupted", file=sys.stderr)
            return 130
        return 0


def _check(got: np.ndarray, inside: np.ndarray, p: np.ndarray, centres: np.ndarray, radii: np.ndarray,
           margin: float, relative: bool) -> str | None:
    """What is wrong with a frame's answer ``got`` (ids, any order) and the events' in-set ``inside`` at the
    camera ``p`` (3,), against brute force over the world ``centres`` (N, 3) / ``radii`` (N,) as it is now,
    or None. No margin: the in-set is the visible set; a margin: a superset whose extra objects are within
    ``r + margin`` (``relative``: ``r (1 + margin)``)."""
    from ..index import brute_query

    exact = brute_query(centres, radii, p)
    got = np.sort(got)
    inside = np.sort(inside)
    if not np.array_equal(got, exact):
        return (f"query gave {got.size} ids, brute force {exact.size} "
                f"(missing {np.setdiff1d(exact, got)[:5].tolist()}, "
                f"extra {np.setdiff1d(got, exact)[:5].tolist()})")
    if margin == 0.0 and not np.array_equal(inside, exact):
        return f"events' in-set ({inside.size}) differs from the visible set ({exact.size})"
    if margin > 0.0:
        extra = np.setdiff1d(inside, exact)
        d = np.asarray(p) - centres[extra]
        d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
        rr = radii[extra]
        big = rr * (1.0 + margin) if relative else rr + margin
        if np.setdiff1d(exact, inside).size or (d2 > big * big).any():
            return "events' in-set breaks the hysteresis rule"
    return None


#: points a check adds inside moving spheres, beside the camera's
INSIDE_PROBES = 8


def _check_inside_movers(index, state, rng: np.random.Generator) -> str | None:
    """What is wrong with the index's answers at :data:`INSIDE_PROBES` points inside the spheres of movers drawn by
    ``rng`` (one point in each, in the cube of half its radius: inside it), against brute force; or None. The camera
    alone rarely stands where a moved object's boxes went wrong (two such octree faults went unseen by soak)."""
    from ..index import brute_query

    if not state.m:
        return None
    for i in state.ids[rng.integers(0, state.m, INSIDE_PROBES)]:
        q = state.centres[i] + rng.uniform(-0.5, 0.5, 3) * state.radii[i]
        got = np.sort(np.asarray(index.query(q), dtype=np.int64))
        exact = brute_query(state.centres, state.radii, q)
        if not np.array_equal(got, exact):
            return (f"inside mover {int(i)}'s sphere, at {q.tolist()}: the index gave {got.size} ids, brute force "
                    f"{exact.size} (missing {np.setdiff1d(exact, got)[:5].tolist()}, "
                    f"extra {np.setdiff1d(got, exact)[:5].tolist()})")
    return None


class _CtrlC:
    """While it is installed (made in the main thread, SIGINT at Python's default handler), the first Ctrl-C
    only sets :attr:`requested` (the frame loop stops at the end of its frame, leaving the index whole);
    a second one raises ``KeyboardInterrupt`` at once. :meth:`restore` puts the previous handler back."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
