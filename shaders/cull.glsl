#version 430
// GPU culling, two passes of one program (no readback between them):
// PREFILTER, one invocation per object: a float32 test, conservative by a stated rounding bound, keeps
//   the objects that may be in view distance (and those that were "in" for the events) from a 16-byte
//   read, appends their ids, and grows the EXACT pass's indirect dispatch by a group every 128 ids;
// EXACT, one invocation per kept object: the index contract's exact float64 predicate
//   (`(dx*dx + dy*dy) + dz*dz <= r*r`), the visibility events, then viewer.frustum's sphere-against-six-
//   planes test in float64; each drawn object's instance record is appended through an atomic counter,
//   and that counter is the indirect draw command's vertex (sprites) or instance (mesh) count; with LOD
//   switches (info.w > 0) its band is counted and written per record, and a band change since the last
//   frame (BandState: the band when last drawn, -1 not drawn) is counted and appended to Changes.
// `precise` keeps every expression exactly as written (no fused multiply-add), so the answers equal the
// CPU's bit for bit. A software rasteriser runs a branch for all lanes of a SIMD vector, so one pass
// doing both would pay the float64 work for every object.
// Defines: PREFILTER (the first pass; else the exact one); the instance layout (INSTANCE_WORDS,
// WORD_POSITION ...) comes from viewer.instances through the shader loader.

#if defined COMPUTE_SHADER

layout(local_size_x = 128) in;

// per object, (x, y, z, view radius), world units, exact; rewritten in place for the movers only
layout(std430, binding = 0) readonly buffer Objects { dvec4 objects[]; };
// per object, the same rounded to float32 (the prefilter's copy); the sign bit of w is the object's
// "in" bit of the visibility events (1: in view distance, with hysteresis), so it costs no extra read
layout(std430, binding = 1) coherent buffer Approx { uvec4 approx[]; };
// per object, (half-extent float bits, RGBA colour bytes)
layout(std430, binding = 2) readonly buffer Looks { uvec2 looks[]; };
// out: instance records of INSTANCE_WORDS 32-bit words; the first `drawn` are written
layout(std430, binding = 3) writeonly buffer Instances { uint records[]; };
// out: the drawn objects' ids, in record order
layout(std430, binding = 4) writeonly buffer DrawnIds { uint drawn_ids[]; };
// the indirect draw command (count, instanceCount, first, baseInstance), the counters, and the EXACT
// pass's indirect dispatch (groups x, y, z); the CPU resets it before each frame
layout(std430, binding = 5) coherent buffer Command {
    uint command[4];
    uint visible;
    uint entered;
    uint left;
    uint kept;        // ids the PREFILTER pass kept
    uint groups[3];
    uint bands[8];    // drawn objects per LOD band (when info.w > 0)
    uint proxies;     // drawn HLOD proxies (objects whose Ranges row has w = 1)
    uint band_changes;  // LOD band changes since the last frame (when info.w > 0): the Changes entries
};
// the PREFILTER pass's kept ids
layout(std430, binding = 7) coherent buffer Kept { uint kept_ids[]; };
// out: the visible objects' ids (for tests and the session's visible_ids(); one store per visible object)
layout(std430, binding = 6) writeonly buffer VisibleIds { uint visible_ids[]; };
// per object, visibility ranges (issue 24; read only when info.z is 1): (begin, HLOD limit, parent as a
// double, -1 none; 1 for an HLOD proxy), world units, as viewer.frame.ranges.Ranges holds them
layout(std430, binding = 8) readonly buffer Ranges { dvec4 ranges[]; };
// per object, info.w LOD switch distances (ascending, +inf padding), world units
layout(std430, binding = 9) readonly buffer Lods { double lods[]; };
// per object, its LOD band when last drawn, -1 when not drawn last frame (read and written only when info.w > 0,
// by the one invocation that owns the object: no atomics); an object drawn last frame was visible, so its "in"
// bit is set and the PREFILTER keeps it: every object whose state may change is visited
layout(std430, binding = 10) coherent buffer BandState { int band_state[]; };
// out: the band changes, as viewer.frame.ranges.Ranges.changes: (id, (previous + 1) | (current + 1) << 16)
layout(std430, binding = 11) writeonly buffer Changes { uvec2 changes[]; };
// out: the drawn objects' LOD bands, in record order (when info.w > 0; shaders/mesh_groups.glsl reads them)
layout(std430, binding = 12) writeonly buffer DrawnBands { uint drawn_bands[]; };

layout(std140, binding = 0) uniform Frame {
    dvec4 planes[6];   // (nx, ny, nz, d), unit normals inwards: n . p + d >= 0 inside
    dvec4 query;       // xyz: the query point (the camera, or the frozen camera); w: the fade fraction
    dvec4 eye;         // xyz: the render camera (records are relative to it); w: bounding-sphere scale
    dvec4 hysteresis;  // x: margin; y: 1 when the margin is a fraction of each radius; z: 1 colours by LOD band
    vec4 query_f;      // xyz: the query point rounded to float32; w: the prefilter's absolute slack
    uvec4 info;        // x: objects; y: which command field counts (0 sprites: vertices, 1 mesh: instances);
                       // z: 1 when the objects have visibility ranges (the Ranges buffer);
                       // w: LOD switch distances per object (0: none; else the drawn are counted per band)
    uvec4 palette[2];  // the LOD band colours (RGBA bytes), bands 0..7 (viewer.frame.ranges.BAND_PALETTE)
};

const uint IN_BIT = 0x80000000u;
// relative slack of the prefilter: 1 + 2^-19 (32 float32 ulps of 1) covers the roundings of the
// stored radius and of the prefilter's own five operations and three squarings
const float GROW = 1.0 + 1.0 / 524288.0;
const uint MAX_GROUPS = 65535u;  // the EXACT pass's groups (GL's minimum maximum); more ids loop

#if defined PREFILTER
void main() {
    // a 2D grid of groups past GL_MAX_COMPUTE_WORK_GROUP_COUNT (65535 x 128 objects)
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= info.x) return;
    // never rejects an object the exact test would keep (the bound: viewer/render/gpu_cull.py)
    uvec4 a = approx[i];
    vec3 c = uintBitsToFloat(a.xyz);
    precise vec3 v = query_f.xyz - c;
    precise float d2f = (v.x * v.x + v.y * v.y) + v.z * v.z;
    precise float s = (uintBitsToFloat(a.w & ~IN_BIT) + query_f.w) * GROW;
    precise float ss = s * s;
    if (d2f <= ss || (a.w & IN_BIT) != 0u) {
        uint slot = atomicAdd(kept, 1u);
        kept_ids[slot] = i;
        if (slot % gl_WorkGroupSize.x == 0u && slot / gl_WorkGroupSize.x < MAX_GROUPS) atomicAdd(groups[0], 1u);
    }
}
#else
#include "_cull_record.glsl"

void exact(uint i) {
    bool was_in = (approx[i].w & IN_BIT) != 0u;
    dvec4 o = objects[i];
    precise double dx = query.x - o.x;
    precise double dy = query.y - o.y;
    precise double dz = query.z - o.z;
    precise double d2 = (dx * dx + dy * dy) + dz * dz;
    precise double rr = o.w * o.w;
    bool vis = d2 <= rr;
    bool ranged = info.z != 0u;
    dvec4 rg = dvec4(0.0lf);
    double dp2 = 0.0lf;
    int par = -1;
    if (ranged && !within_ranges(i, d2, rg, dp2, par)) vis = false;

    // visibility events: enter at d <= r, leave beyond r + margin (or r (1 + margin))
    if (vis && !was_in) {
        atomicOr(approx[i].w, IN_BIT);
        atomicAdd(entered, 1u);
    } else if (!vis && was_in) {
        bool keep = false;
        if (hysteresis.x > 0.0lf) {
            precise double big = hysteresis.y > 0.0lf ? o.w * (1.0lf + hysteresis.x) : o.w + hysteresis.x;
            precise double bb = big * big;
            keep = d2 <= bb;
            if (keep && ranged) {  // the near edges widen by the margin too (VisibilityTracker's rule)
                precise double small = hysteresis.y > 0.0lf ? rg.x * (1.0lf - hysteresis.x) : rg.x - hysteresis.x;
                precise double ss = small * small;
                if (small > 0.0lf) keep = d2 >= ss;
                if (keep && par >= 0) {
                    double pl = ranges[par].y;
                    precise double lim = hysteresis.y > 0.0lf ? pl * (1.0lf + hysteresis.x) : pl + hysteresis.x;
                    precise double ll = lim * lim;
                    keep = dp2 < ll;
                }
            }
        }
        if (!keep) {
            atomicAnd(approx[i].w, ~IN_BIT);
            atomicAdd(left, 1u);
        }
    }
    if (!vis) {
        track(i, -1);
        return;
    }
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

void main() {
    uint n = kept;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint j = gl_GlobalInvocationID.x; j < n; j += stride) exact(kept_ids[j]);
}
#endif
#endif
