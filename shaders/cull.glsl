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

#include "_cull_buffers.glsl"
// per object, the exact row rounded to float32 (the prefilter's copy); the sign bit of w is the object's
// "in" bit of the visibility events (1: in view distance, with hysteresis), so it costs no extra read
layout(std430, binding = B_APPROX) coherent buffer Approx { uvec4 approx[]; };
// the PREFILTER pass's kept ids
layout(std430, binding = B_KEPT) coherent buffer Kept { uint kept_ids[]; };

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
    if (vis) draw_visible(i, o, d2, ranged, rg, par, dp2);
    else track(i, -1);
}

void main() {
    uint n = kept;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint j = gl_GlobalInvocationID.x; j < n; j += stride) exact(kept_ids[j]);
}
#endif
#endif
