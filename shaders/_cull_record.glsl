// A part, not a program (no #version line; viewer.shaders.shader_names skips names starting with "_"): the
// steps after the exact test that shaders/cull.glsl's EXACT pass and shaders/cull_visible.glsl's list pass
// share, each the CPU's own expression in float64 (`precise`: no fused multiply-add, so the answers equal
// the CPU's bit for bit). Each includer declares before its #include: the Frame block (planes, query, eye,
// hysteresis, palette, info) and the buffers objects, ranges, lods, records, band_state and changes and the
// command field band_changes, with these names.

// The visibility ranges of object i at squared distance d2 from the query point, as
// viewer.frame._ranges_kernels.filter_ranges: begin**2 <= d2, and an HLOD child only while its parent's
// squared distance is below the parent's limit squared. Returns whether it is in range; fills its Ranges
// row, its parent (-1: none) and the parent's squared distance (0 without one).
bool within_ranges(uint i, double d2, out dvec4 rg, out double dp2, out int par) {
    rg = ranges[i];
    dp2 = 0.0lf;
    par = int(rg.z);
    bool ok = true;
    precise double bb = rg.x * rg.x;
    if (rg.x > 0.0lf && d2 < bb) ok = false;
    if (par >= 0) {
        dvec4 po = objects[par];
        precise double px = query.x - po.x;
        precise double py = query.y - po.y;
        precise double pz = query.z - po.z;
        precise double pd2 = (px * px + py * py) + pz * pz;
        dp2 = pd2;
        precise double lim = ranges[par].y;
        precise double ll = lim * lim;
        if (!(pd2 < ll)) ok = false;
    }
    return ok;
}

// viewer.frame.frustum's sphere-against-six-planes test: is object o's bounding sphere (its half-extent, the
// float bits of look.x, times eye.w) at least partly inside every plane?
bool in_frustum(dvec4 o, uvec2 look) {
    precise double bound = double(uintBitsToFloat(look.x)) * eye.w;
    precise double neg_bound = -bound;
    for (int p = 0; p < 6; ++p) {
        dvec4 pl = planes[p];
        precise double sd = ((pl.x * o.x + pl.y * o.y) + pl.z * o.z) + pl.w;
        if (sd < neg_bound) return false;
    }
    return true;
}

// The LOD band of object i at squared distance d2, as viewer.frame._ranges_kernels.lod_bands:
// #{l : lod[l]**2 <= d2} over its info.w switch distances.
uint lod_band_of(uint i, double d2) {
    uint b = 0u;
    for (uint l = 0u; l < info.w; ++l) {
        double sw = lods[i * info.w + l];
        precise double s2 = sw * sw;
        if (s2 <= d2) b += 1u; else break;
    }
    return b;
}

// Object o's instance record into `slot`, as viewer.frame._frame_kernels.gather_instances writes it: its
// position relative to the render camera, size, colour (its own, or its LOD band's) and fade, the fade
// falling at the far edge and, with visibility ranges, at the near edges as
// viewer.frame._ranges_kernels.range_fades (rg, par, dp2: what within_ranges filled).
void write_record(uint slot, dvec4 o, uvec2 look, bool ranged, dvec4 rg, int par, double dp2, uint lod_band) {
    precise double ex = o.x - eye.x;
    precise double ey = o.y - eye.y;
    precise double ez = o.z - eye.z;
    double fade = 1.0lf;
    precise double band = query.w * o.w;
    if (band > 0.0lf) {
        precise double fx = o.x - query.x;
        precise double fy = o.y - query.y;
        precise double fz = o.z - query.z;
        precise double dist = sqrt((fx * fx + fy * fy) + fz * fz);
        precise double t = (o.w - dist) / band;
        fade = clamp(t, 0.0lf, 1.0lf);
    }
    if (ranged && query.w > 0.0lf) {
        if (rg.x > 0.0lf) {
            precise double fx = o.x - query.x;
            precise double fy = o.y - query.y;
            precise double fz = o.z - query.z;
            precise double t = (sqrt((fx * fx + fy * fy) + fz * fz) - rg.x) / (query.w * rg.x);
            if (t < fade) fade = max(t, 0.0lf);
        }
        if (par >= 0) {
            dvec4 pr = ranges[par];
            precise double w = pr.y - pr.x;
            if (w > 0.0lf) {
                precise double t = (pr.y - sqrt(dp2)) / w;
                if (t < fade) fade = max(t, 0.0lf);
            }
        }
    }
    uint r = slot * uint(INSTANCE_WORDS);
    records[r + uint(WORD_POSITION)] = floatBitsToUint(float(ex));
    records[r + uint(WORD_POSITION) + 1u] = floatBitsToUint(float(ey));
    records[r + uint(WORD_POSITION) + 2u] = floatBitsToUint(float(ez));
    records[r + uint(WORD_SIZE)] = look.x;
    uint bc = min(lod_band, 7u);
    records[r + uint(WORD_COLOUR)] = hysteresis.z > 0.0lf ? palette[bc / 4u][bc % 4u] : look.y;
    records[r + uint(WORD_FADE)] = floatBitsToUint(float(fade));
}

// The band change of object i this frame (cur: its band if drawn, else -1), as
// viewer.frame._ranges_kernels.band_events: a drawn object whose band differs from its last, or an object
// drawn last frame and not now. Only with LOD switches (info.w > 0); the one invocation that owns object i
// reads and writes its band_state entry (no atomics).
void track(uint i, int cur) {
    if (info.w == 0u) return;
    int old = band_state[i];
    if (old == cur) return;
    band_state[i] = cur;
    changes[atomicAdd(band_changes, 1u)] = uvec2(i, uint(old + 1) | (uint(cur + 1) << 16));
}

// A visible object i (o its row, d2 its squared distance, the rest what within_ranges filled): counted and
// listed as visible, then, inside the frustum, drawn: its record appended through the draw command's count,
// its id, its LOD band (counted, tracked, listed beside the record) and, for an HLOD proxy, the proxies'
// count; outside, no longer drawn.
void draw_visible(uint i, dvec4 o, double d2, bool ranged, dvec4 rg, int par, double dp2) {
    visible_ids[atomicAdd(visible, 1u)] = i;
    uvec2 look = looks[i];
    if (!in_frustum(o, look)) {
        track(i, -1);
        return;
    }
    uint slot = atomicAdd(command[info.y], 1u);
    drawn_ids[slot] = i;
    if (ranged && rg.w > 0.0lf) atomicAdd(proxies, 1u);
    uint lod_band = 0u;
    if (info.w > 0u) {
        lod_band = lod_band_of(i, d2);
        atomicAdd(bands[min(lod_band, 7u)], 1u);
        track(i, int(lod_band));
        drawn_bands[slot] = lod_band;
    }
    write_record(slot, o, look, ranged, rg, par, dp2, lod_band);
}
