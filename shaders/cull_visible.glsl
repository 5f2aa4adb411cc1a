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
layout(std430, binding = 7) writeonly buffer List { uint list[]; };
// this frame's changed slots: (slot, id)
layout(std430, binding = 10) readonly buffer Pairs { uvec2 pairs[]; };
uniform uint count;  // pairs

void main() {
    uint j = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (j >= count) return;
    uvec2 p = pairs[j];
    list[p.x] = p.y;
}
#else
layout(std430, binding = 7) readonly buffer List { uint list[]; };
// per object, (x, y, z, view radius), world units, exact (GpuCuller's buffer, moved by cull_move.glsl)
layout(std430, binding = 0) readonly buffer Objects { dvec4 objects[]; };
// per object, (half-extent float bits, RGBA colour bytes)
layout(std430, binding = 2) readonly buffer Looks { uvec2 looks[]; };
// out: instance records of INSTANCE_WORDS 32-bit words; the first `drawn` are written
layout(std430, binding = 3) writeonly buffer Instances { uint records[]; };
// out: the drawn objects' ids, in record order
layout(std430, binding = 4) writeonly buffer DrawnIds { uint drawn_ids[]; };
// the indirect draw command and the counters, shaders/cull.glsl's layout (entered, left, kept and the
// groups are not written here: the events are the CPU's); the CPU resets it before each frame
layout(std430, binding = 5) coherent buffer Command {
    uint command[4];
    uint visible;
    uint entered;
    uint left;
    uint kept;
    uint groups[3];
    uint bands[8];
    uint proxies;
    uint band_changes;  // LOD band changes since the view's last frame (when info.w > 0): the Changes entries
};
// out: the visible objects' ids (for tests; one store per visible list entry)
layout(std430, binding = 6) writeonly buffer VisibleIds { uint visible_ids[]; };
// per object, visibility ranges (read only when info.z is 1): (begin, HLOD limit, parent, proxy)
layout(std430, binding = 8) readonly buffer Ranges { dvec4 ranges[]; };
// per object, info.w LOD switch distances (ascending, +inf padding), world units
layout(std430, binding = 9) readonly buffer Lods { double lods[]; };
// out: the band changes, as viewer.frame.ranges.Ranges.changes: (id, (previous + 1) | (current + 1) << 16)
layout(std430, binding = 11) writeonly buffer Changes { uvec2 changes[]; };
// out: the drawn objects' LOD bands, in record order (when info.w > 0; shaders/mesh_groups.glsl reads them)
layout(std430, binding = 12) writeonly buffer DrawnBands { uint drawn_bands[]; };
// the view's own: per object, its LOD band when the view last drew it, -1 when not drawn last frame (when
// info.w > 0; binding 10 is the SCATTER pass's Pairs)
layout(std430, binding = 13) coherent buffer BandState { int band_state[]; };
// the ids that left the list this frame (the first `gone` entries; only with LOD switches)
layout(std430, binding = 14) readonly buffer Gone { uint gone_ids[]; };

layout(std140, binding = 0) uniform Frame {
    dvec4 planes[6];   // (nx, ny, nz, d), unit normals inwards: n . p + d >= 0 inside
    dvec4 query;       // xyz: the query point; w: the fade fraction
    dvec4 eye;         // xyz: the render camera (records are relative to it); w: bounding-sphere scale
    dvec4 hysteresis;  // z: 1 colours by LOD band (x, y unused here)
    vec4 query_f;      // unused here
    uvec4 info;        // y: which command field counts; z: 1 with visibility ranges; w: LOD switches per object
    uvec4 palette[2];  // the LOD band colours
};

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
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint total = count + gone;
    for (uint j = gl_GlobalInvocationID.x; j < total; j += stride) {
        if (j < count) cull_one(list[j]);
        else track(gone_ids[j - count], -1);
    }
}
#endif
#endif
