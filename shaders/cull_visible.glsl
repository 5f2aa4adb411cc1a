#version 430
// The `coherent` culling mode's GPU side (viewer/render/delta_cull.py): a persistent list of the objects
// in view distance (the visibility events' in-set), kept on the GPU across frames.
// SCATTER, one invocation per changed slot: writes list[slot] = id from the frame's (slot, id) pairs (the
//   CPU's slot mirror appended the entered objects and swap-removed the left ones; only the changed slots
//   cross the bus, in one buffer write a frame).
// otherwise, one invocation per list entry (never per object): the index contract's exact float64
//   predicate and the visibility ranges again (the list may hold objects kept in by the events'
//   hysteresis margin), viewer.frame.frustum's sphere-against-six-planes test in float64, the fade and
//   the LOD band, and each drawn object's instance record appended through an atomic counter that is the
//   indirect draw command's count, as shaders/cull.glsl's exact pass writes them (same buffers, same
//   bindings, same record). `precise`: no fused multiply-add, so the answers equal the CPU's bit for bit.
//   With LOD switches, each entry's band change against the view's own BandState, and after the list the
//   objects that left it this frame (Gone), each no longer drawn: every object drawn last frame was in the
//   list, so each is visited once.
// Defines: SCATTER; the instance layout (INSTANCE_WORDS, WORD_POSITION ...) from the shader loader.

#if defined COMPUTE_SHADER

layout(local_size_x = 128) in;

// the persistent list of ids (its first `count` entries are the in-set)
#if defined SCATTER
layout(std430, binding = B_LIST) writeonly buffer List { uint list[]; };
// this frame's changed slots: (slot, id)
layout(std430, binding = B_PAIRS) readonly buffer Pairs { uvec2 pairs[]; };
uniform uint count;  // pairs

void main() {
    uint j = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (j >= count) return;
    uvec2 p = pairs[j];
    list[p.x] = p.y;
}
#else
layout(std430, binding = B_LIST) readonly buffer List { uint list[]; };
#include "_cull_buffers.glsl"
// the ids that left the list this frame (the first `gone` entries; only with LOD switches)
layout(std430, binding = B_GONE) readonly buffer Gone { uint gone_ids[]; };

uniform uint count;  // list entries
uniform uint gone;   // ids in Gone

#include "_cull_record.glsl"

void cull_one(uint i) {
    dvec4 o = objects[i];
    precise double dx = query.x - o.x;
    precise double dy = query.y - o.y;
    precise double dz = query.z - o.z;
    precise double d2 = (dx * dx + dy * dy) + dz * dz;
    precise double rr = o.w * o.w;
    if (!(d2 <= rr)) {
        track(i, -1);
        return;
    }
    bool ranged = info.z != 0u;
    dvec4 rg = dvec4(0.0lf);
    double dp2 = 0.0lf;
    int par = -1;
    if (ranged && !within_ranges(i, d2, rg, dp2, par)) {
        track(i, -1);
        return;
    }
    draw_visible(i, o, d2, ranged, rg, par, dp2);
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint total = count + gone;
    for (uint j = gl_GlobalInvocationID.x; j < total; j += stride) {
        if (j < count) cull_one(list[j]);
        else track(gone_ids[j - count], -1);
    }
}
#endif
#endif
