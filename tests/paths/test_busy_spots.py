"""Where a flight goes, without GL: a generated fly-through stays where the objects are (an imported level's
objects sit at y 3..60 over a wide x/z, in a far larger world), and the default camera starts where a scene
is busy, with two seconds of W still among its objects."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.camera import InputState, busy_spots
from viewer.frame.pipeline import FramePipeline, camera_for_scene
from viewer.scenes import Scene, generate_scene


def flat_scene(n: int = 4000, seed: int = 3) -> Scene:
    """A level: objects at y in 3..60 over x, z in -1000..1000, in a world 4000 wide (as a glTF import says)."""
    rng = np.random.default_rng(seed)
    c = np.column_stack([rng.uniform(-1000, 1000, n), rng.uniform(3, 60, n), rng.uniform(-1000, 1000, n)])
    return Scene(name="flat", centres=c, radii=rng.uniform(20, 80, n), sizes=np.full(n, 2.0, np.float32),
                 colours=np.full((n, 4), 200, np.uint8), category=np.zeros(n, np.int32), world=4000.0)


def test_the_generated_flythrough_of_a_flat_level_stays_within_the_objects_height():
    from viewer.paths import generated_path

    sc = flat_scene()
    path = generated_path(sc)
    samples = path.sample(dt=1.0 / 60.0)
    ys = np.array([samples.pose(k)[1] for k in range(len(samples))])
    xz = np.array([[samples.pose(k)[0], samples.pose(k)[2]] for k in range(len(samples))])
    y0, y1 = sc.centres[:, 1].min(), sc.centres[:, 1].max()
    margin = 0.1 * (y1 - y0)
    print(f"path y {ys.min():.2f} .. {ys.max():.2f}, objects y {y0:.2f} .. {y1:.2f}, {len(ys)} samples")
    assert ((ys >= y0 - margin) & (ys <= y1 + margin)).all(), (ys.min(), ys.max())
    assert (np.abs(xz) <= 1000 * 1.12).all()  # x and z too: within the objects' box, grown by a little
    # and its last pose, the busiest (what --screenshot saves), draws objects
    p = FramePipeline(sc, "brute", indexes=["brute"])
    cam = camera_for_scene(sc)
    p.run(cam, 0.0, pose=samples.pose(len(samples) - 1))
    assert p.n_drawn > 0


def test_busy_spots_are_the_densest_clusters_first():
    sc = generate_scene("clustered", 20000, seed=5, clusters=6)
    spots = busy_spots(sc.centres, sc.radii, 4)
    assert len(spots) >= 2
    counts = [s.count for s in spots]
    assert counts[0] == max(counts)
    # each spot's middle lies near a cluster centre (within 3 of that cluster's spreads)
    for s in spots:
        eye = np.array(s.pose[:3])
        d = np.linalg.norm(sc.cluster_centres - eye, axis=1)
        j = int(np.argmin(d))
        assert d[j] <= 3 * max(sc.cluster_spread[j], 1.0) + 0.5 * np.median(sc.radii), (s, sc.cluster_centres[j])


@pytest.mark.parametrize("recipe", ["clustered", "flat"])
def test_two_seconds_of_w_from_the_default_start_keep_drawing(recipe):
    sc = generate_scene("clustered", 30000, seed=2, clusters=8) if recipe == "clustered" else flat_scene()
    cam = camera_for_scene(sc)
    p = FramePipeline(sc, "octree", indexes=["octree"])
    w = InputState(actions=frozenset({"forward"}))
    drawn = []
    for k in range(121):  # frame 0 at the start, then 2 s of W at 60 fps
        p.run(cam, 1.0 / 60.0 if k else 0.0, input_state=w if k else None)
        drawn.append(p.finish().drawn)
    print(f"{recipe}: drawn at the start {drawn[0]}, min over 2 s of W {min(drawn)}, speed {cam.speed:.3g}")
    assert min(drawn) > 0
    assert drawn[0] >= (10 if recipe == "clustered" else 1)
