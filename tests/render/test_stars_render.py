"""A scene's look says how it is drawn (``[look] style`` / ``sky``), recorded in the recipe and the .npz;
a star field (style "stars") is drawn as unlit point sprites on the scene's sky, each star as bright as its
apparent magnitude from the camera: 5 log10(r / d) magnitudes above the limit, nothing at its view
distance. Pixels asserted, no golden image."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viewer.camera import FlyCamera
from viewer.scenes import SceneError, generate_scene, load_scene, read_npz, save_scene, scene_from_arrays

W, H = 360, 240
SKY = "#000814"
SKY_RGB = np.array([0x00, 0x08, 0x14])

# three white stars at the same distance (~10.5) with different view distances, so their apparent
# magnitudes differ by their r alone; one orange star beyond its view distance; one star behind
STARS = dict(
    centres=np.array([[-3, 0, -10], [3, 0, -10], [0, 3, -10], [0, -3, -10], [0, 0, 10]], float),
    radii=np.array([200.0, 25.0, 11.5, 10.0, 200.0]),
    colours=np.array([[255, 255, 255, 255]] * 3 + [[255, 180, 107, 255], [255, 255, 255, 255]], np.uint8),
)


def magnitudes_above_limit(i: int, eye=(0.0, 0.0, 0.0)) -> float:
    d = np.linalg.norm(STARS["centres"][i] - np.asarray(eye))
    return 5.0 * np.log10(STARS["radii"][i] / d)


def star_scene(sky=SKY, **changes):
    arrays = {**STARS, **changes}
    return scene_from_arrays(arrays["centres"], arrays["radii"], colours=arrays["colours"],
                             sizes=np.full(len(arrays["radii"]), 0.01, np.float32), world=100.0, origin=(0, 0, 0),
                             name="stars", look={"style": "stars", "sky": sky})


def pixel_of(p, fov=60.0):
    """Image (row, col) of the world point p seen from the origin looking down -Z."""
    f = 1.0 / np.tan(np.radians(fov) / 2)
    x = p[0] * f / (W / H) / -p[2]
    y = p[1] * f / -p[2]
    return int((1 - y) / 2 * H), int((x + 1) / 2 * W)


def peak(img, p, reach=8):
    """The brightest pixel (summed RGB) within ``reach`` pixels of where ``p`` projects, as (sum, rgb)."""
    r, c = pixel_of(p)
    win = img[max(r - reach, 0):r + reach + 1, max(c - reach, 0):c + reach + 1].astype(int)
    k = np.unravel_index(np.argmax(win.sum(axis=2)), win.shape[:2])
    return int(win[k].sum()), win[k]


# --------------------------------------------------------------------------- the look, without GL


def test_the_look_style_is_recorded_in_the_recipe_and_the_file(tmp_path):
    s = load_scene("starfield-100k")
    assert (s.style, s.sky) == ("stars", None) and s.recipe["look"]["style"] == "stars"
    path = save_scene(s, tmp_path / "sf.npz")
    with np.load(path) as z:
        assert json.loads(str(z["look"])) == {"style": "stars", "sky": None}
    back = read_npz(path)
    assert (back.style, back.sky) == ("stars", None)
    # another sky in the recipe goes to the scene and the file
    t = generate_scene("starfield", 500, seed=2, world=4000.0, look={"sky": "#101020"})
    assert (t.style, t.sky) == ("stars", "#101020")
    assert read_npz(save_scene(t, tmp_path / "t.npz")).sky == "#101020"
    # an ordinary scene is drawn as objects, and its file has no look entry (as before the entry existed)
    u = generate_scene("uniform", 100, seed=1)
    assert (u.style, u.sky) == ("objects", None)
    with np.load(save_scene(u, tmp_path / "u.npz")) as z:
        assert "look" not in z.files


def test_a_file_without_a_look_entry_is_drawn_as_its_recipe_says(tmp_path):
    s = generate_scene("starfield", 300, seed=4, world=4000.0)
    with np.load(save_scene(s, tmp_path / "new.npz")) as z:
        entries = {k: z[k] for k in z.files if k != "look"}
    np.savez(tmp_path / "old.npz", **entries)
    assert read_npz(tmp_path / "old.npz").style == "stars"


@pytest.mark.parametrize("look, field", [({"style": "planets"}, "look.style"), ({"sky": "black"}, "look.sky"),
                                         ({"style": "stars", "glow": 1}, "look.glow")])
def test_a_bad_look_names_its_field(tmp_path, look, field):
    with pytest.raises(SceneError) as exc:
        scene_from_arrays(STARS["centres"], STARS["radii"], look=look)
    assert exc.value.field == field
    s = generate_scene("uniform", 50, seed=1)
    with np.load(save_scene(s, tmp_path / "s.npz")) as z:
        entries = dict(z)
    np.savez(tmp_path / "bad.npz", **entries, look=np.array(json.dumps(look)))
    with pytest.raises(SceneError) as exc:
        read_npz(tmp_path / "bad.npz")
    assert exc.value.field == field
    with pytest.raises(SceneError) as exc:
        generate_scene("uniform", 50, look=look)
    assert exc.value.field == field


# --------------------------------------------------------------------------- drawing


def render(gl, scene, pose=(0.0, 0.0, 0.0, 0.0, 0.0), **kw):
    kw.setdefault("hud", False)
    kw.setdefault("index", "brute")
    s = gl.render.ViewerSession(gl.ctx, gl.fbo, scene, camera=FlyCamera(far=500.0, near=0.1), **kw)
    st = s.frame(0.0, pose=pose)
    return s, st, s.image()


@pytest.mark.gl
def test_stars_on_the_scene_sky_as_bright_as_their_apparent_magnitude(gl):
    s, st, img = render(gl, star_scene())
    assert (st.visible, st.drawn) == (4, 3)  # the orange star is beyond its view distance; one is behind
    # the background is the scene's sky, exactly, wherever no star is
    for rc in [(0, 0), (H - 1, W - 1), (H // 2, W // 2), pixel_of(STARS["centres"][3])]:
        assert (img[rc].astype(int) == SKY_RGB).all(), (rc, img[rc])
    lit = np.abs(img.astype(int) - SKY_RGB).max(axis=2) > 0
    assert lit.mean() < 0.01  # points, not spheres
    # brightness follows the magnitude above the limit: 5 log10(r / d) = 6.6, 1.9, 0.2 for the three
    dm = [magnitudes_above_limit(i) for i in range(3)]
    assert dm[0] > dm[1] > dm[2] > 0
    peaks = [peak(img, STARS["centres"][i])[0] for i in range(3)]
    assert peaks[0] > peaks[1] > peaks[2] > SKY_RGB.sum(), peaks
    # the brightest pixel of the image is the brightest star's
    r, c = np.unravel_index(np.argmax(img.astype(int).sum(axis=2)), img.shape[:2])
    r0, c0 = pixel_of(STARS["centres"][0])
    assert abs(r - r0) <= 2 and abs(c - c0) <= 2
    # the brightest star is drawn bigger than the faintest
    def area(i):
        r, c = pixel_of(STARS["centres"][i])
        return int(lit[r - 12:r + 13, c - 12:c + 13].sum())
    assert area(0) > area(1) > 0 and area(1) >= area(2)


@pytest.mark.gl
def test_a_star_is_coloured_by_its_colour_and_fades_to_nothing_at_its_view_distance(gl):
    orange = STARS["colours"][3]
    # the orange star well inside its view distance: its colour, not white and not lit
    _, _, img = render(gl, star_scene(radii=np.array([200.0, 25.0, 11.5, 200.0, 200.0])))
    _, px = peak(img, STARS["centres"][3])
    px = px - SKY_RGB  # light adds onto the sky
    assert px[0] >= 200 and px[0] > px[1] > px[2], px
    assert abs(px[1] / px[0] - orange[1] / orange[0]) < 0.05 and abs(px[2] / px[0] - orange[2] / orange[0]) < 0.05
    # just inside its view distance (d / r = 0.999: 0.002 magnitudes above the limit): nothing to see
    d = np.linalg.norm(STARS["centres"][3])
    _, st, img = render(gl, star_scene(radii=np.array([200.0, 25.0, 11.5, d / 0.999, 200.0])))
    assert st.visible == 5
    r, c = pixel_of(STARS["centres"][3])
    assert (img[r - 6:r + 7, c - 6:c + 7].astype(int) == SKY_RGB).all()


@pytest.mark.gl
def test_brightness_is_from_the_current_camera_position(gl):
    scene = star_scene()
    _, _, far = render(gl, scene)
    # half way to the faint star (no. 1): 5 log10(2) = 1.5 magnitudes brighter; seen at the same pixel
    # by looking along the same ray from a point on it
    p = STARS["centres"][1]
    _, _, near = render(gl, scene, pose=(p[0] / 2, p[1] / 2, p[2] / 2, 0.0, 0.0))
    r, c = pixel_of(p)
    assert near[r - 8:r + 9, c - 8:c + 9].astype(int).sum(axis=2).max() > peak(far, p)[0]


@pytest.mark.gl
def test_a_star_field_ignores_draw_mode_and_fade_and_other_scenes_keep_their_sky(gl):
    scene = star_scene()
    s, _, img = render(gl, scene)
    assert s.options.draw == "sprites"
    assert s.toggle_draw_mode() == "sprites"  # a star field has no other drawing
    _, _, mesh = render(gl, scene, draw="mesh")
    _, _, nofade = render(gl, scene, fade=0.0)
    assert np.array_equal(img, mesh) and np.array_equal(img, nofade)
    # the default sky of a star field is black; of other scenes the viewer's grey-blue, as before
    _, _, black = render(gl, star_scene(sky=None))
    assert (black[0, 0] == 0).all()
    from viewer.render.session import FOG_COLOUR

    plain = scene_from_arrays(STARS["centres"], STARS["radii"], world=100.0, origin=(0, 0, 0))
    _, _, grey = render(gl, plain, fog=0.0)
    assert (grey[0, 0].astype(int) == np.round(np.array(FOG_COLOUR) * 255)).all()


@pytest.mark.gl
def test_gpu_culling_draws_the_same_stars(gl):
    from viewer.render.gpu_cull import gpu_cull_unavailable

    why = gpu_cull_unavailable(gl.ctx)
    if why:
        pytest.skip(why)
    scene = star_scene()
    _, _, cpu = render(gl, scene)
    s, st, gpu = render(gl, scene, index="gpu")
    assert (st.visible, st.drawn) == (4, 3)
    assert np.array_equal(cpu, gpu)  # light adds up in any order: the GPU's record order does not matter
