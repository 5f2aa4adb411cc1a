#version 430
// GPU culling: one invocation per object tests the view distance (the index contract's exact float64
// predicate) and the frustum (viewer.frustum's sphere-against-six-planes test, in float64), appends the
// instance record of each drawn object through an atomic counter, and that counter is the indirect draw
// command's vertex (sprites) or instance (mesh) count. `precise` keeps every double expression exactly as
// written (no fused multiply-add), so the answers equal the CPU's bit for bit.
// Defines: VISIBLE_IDS (tests, debugging) also appends the id of every visible object.

#if defined COMPUTE_SHADER

layout(local_size_x = 128) in;

// per object, (x, y, z, view radius), world units; rewritten in place for the movers only
layout(std430, binding = 0) readonly buffer Objects { dvec4 objects[]; };
// per object, (half-extent float bits, RGBA colour bytes)
layout(std430, binding = 1) readonly buffer Looks { uvec2 looks[]; };
// out: 24-byte instance records (viewer.frame.INSTANCE_DTYPE): x, y, z (relative to the eye), size,
// colour, fade; the first `drawn` are written
layout(std430, binding = 2) writeonly buffer Instances { uint records[]; };
// out: the drawn objects' ids, in record order
layout(std430, binding = 3) writeonly buffer DrawnIds { uint drawn_ids[]; };
// the indirect draw command (count, instanceCount, first, baseInstance), then the counters
// visible, entered, left; the CPU resets it before each dispatch
layout(std430, binding = 4) coherent buffer Command { uint command[4]; uint visible; uint entered; uint left; };
// one "in" bit per object for the visibility events (1: in view distance, with hysteresis)
layout(std430, binding = 5) coherent buffer InFlags { uint in_flags[]; };
#if defined VISIBLE_IDS
layout(std430, binding = 6) writeonly buffer VisibleIds { uint visible_ids[]; };
#endif

layout(std140, binding = 0) uniform Frame {
    dvec4 planes[6];   // (nx, ny, nz, d), unit normals inwards: n . p + d >= 0 inside
    dvec4 query;       // xyz: the query point (the camera, or the frozen camera); w: the fade fraction
    dvec4 eye;         // xyz: the render camera (records are relative to it); w: bounding-sphere scale
    dvec4 hysteresis;  // x: margin; y: 1 when the margin is a fraction of each radius
    uvec4 info;        // x: objects; y: which command field counts (0 sprites: vertices, 1 mesh: instances)
};

void main() {
    // a 2D grid of groups past GL_MAX_COMPUTE_WORK_GROUP_COUNT (65535 x 128 objects)
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= info.x) return;
    dvec4 o = objects[i];
    precise double dx = query.x - o.x;
    precise double dy = query.y - o.y;
    precise double dz = query.z - o.z;
    precise double d2 = (dx * dx + dy * dy) + dz * dz;
    precise double rr = o.w * o.w;
    bool vis = d2 <= rr;

    // visibility events: enter at d <= r, leave beyond r + margin (or r (1 + margin))
    uint word = i >> 5u;
    uint bit = 1u << (i & 31u);
    bool was_in = (in_flags[word] & bit) != 0u;
    if (vis && !was_in) {
        atomicOr(in_flags[word], bit);
        atomicAdd(entered, 1u);
    } else if (!vis && was_in) {
        bool keep = false;
        if (hysteresis.x > 0.0lf) {
            precise double big = hysteresis.y > 0.0lf ? o.w * (1.0lf + hysteresis.x) : o.w + hysteresis.x;
            precise double bb = big * big;
            keep = d2 <= bb;
        }
        if (!keep) {
            atomicAnd(in_flags[word], ~bit);
            atomicAdd(left, 1u);
        }
    }
    if (!vis) return;
#if defined VISIBLE_IDS
    visible_ids[atomicAdd(visible, 1u)] = i;
#else
    atomicAdd(visible, 1u);
#endif

    uvec2 look = looks[i];
    precise double bound = double(uintBitsToFloat(look.x)) * eye.w;
    precise double neg_bound = -bound;
    for (int p = 0; p < 6; ++p) {
        dvec4 pl = planes[p];
        precise double s = ((pl.x * o.x + pl.y * o.y) + pl.z * o.z) + pl.w;
        if (s < neg_bound) return;
    }

    uint slot = atomicAdd(command[info.y], 1u);
    drawn_ids[slot] = i;
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
        precise double a = (o.w - dist) / band;
        fade = clamp(a, 0.0lf, 1.0lf);
    }
    uint r = slot * 6u;
    records[r] = floatBitsToUint(float(ex));
    records[r + 1u] = floatBitsToUint(float(ey));
    records[r + 2u] = floatBitsToUint(float(ez));
    records[r + 3u] = look.x;
    records[r + 4u] = look.y;
    records[r + 5u] = floatBitsToUint(float(fade));
}
#endif
