// A part, not a program (see shaders/_cull_record.glsl): the buffers and the Frame block that shaders/cull.glsl
// and shaders/cull_visible.glsl share, declared once. Each binding point is a B_* define that the shader loader
// puts in every program (viewer.render.shaders.CULL_BINDINGS, which the Python side binds by), so a buffer's
// number is written in one place.

// per object, (x, y, z, view radius), world units, exact; rewritten in place for the movers only
// (shaders/cull_move.glsl)
layout(std430, binding = B_OBJECTS) readonly buffer Objects { dvec4 objects[]; };
// per object, (half-extent float bits, RGBA colour bytes)
layout(std430, binding = B_LOOKS) readonly buffer Looks { uvec2 looks[]; };
// out: instance records of INSTANCE_WORDS 32-bit words; the first `drawn` are written
layout(std430, binding = B_INSTANCES) writeonly buffer Instances { uint records[]; };
// out: the drawn objects' ids, in record order
layout(std430, binding = B_DRAWN_IDS) writeonly buffer DrawnIds { uint drawn_ids[]; };
// the indirect draw command (count, instanceCount, first, baseInstance), the counters, and cull.glsl's EXACT
// pass's indirect dispatch (groups x, y, z); the CPU resets it before each frame. The list pass writes neither
// the events (entered, left: the CPU's there) nor kept and the groups.
layout(std430, binding = B_COMMAND) coherent buffer Command {
    uint command[4];
    uint visible;
    uint entered;
    uint left;
    uint kept;        // ids the PREFILTER pass kept
    uint groups[3];
    uint bands[8];    // drawn objects per LOD band (when info.w > 0)
    uint proxies;     // drawn HLOD proxies (objects whose Ranges row has w = 1)
    uint band_changes;  // LOD band changes since the view's last frame (when info.w > 0): the Changes entries
};
// out: the visible objects' ids (for tests and the session's visible_ids(); one store per visible object)
layout(std430, binding = B_VISIBLE_IDS) writeonly buffer VisibleIds { uint visible_ids[]; };
// per object, visibility ranges (issue 24; read only when info.z is 1): (begin, HLOD limit, parent as a
// double, -1 none; 1 for an HLOD proxy), world units, as viewer.frame.ranges.Ranges holds them
layout(std430, binding = B_RANGES) readonly buffer Ranges { dvec4 ranges[]; };
// per object, info.w LOD switch distances (ascending, +inf padding), world units
layout(std430, binding = B_LODS) readonly buffer Lods { double lods[]; };
// per object, its LOD band when its view last drew it, -1 when not drawn last frame (read and written only
// when info.w > 0, by the one invocation that owns the object: no atomics); the gpu mode's own, or a coherent
// view's
layout(std430, binding = B_BAND_STATE) coherent buffer BandState { int band_state[]; };
// out: the band changes, as viewer.frame.ranges.Ranges.changes: (id, (previous + 1) | (current + 1) << 16)
layout(std430, binding = B_CHANGES) writeonly buffer Changes { uvec2 changes[]; };
// out: the drawn objects' LOD bands, in record order (when info.w > 0; shaders/mesh_groups.glsl reads them)
layout(std430, binding = B_DRAWN_BANDS) writeonly buffer DrawnBands { uint drawn_bands[]; };

layout(std140, binding = 0) uniform Frame {
    dvec4 planes[6];   // (nx, ny, nz, d), unit normals inwards: n . p + d >= 0 inside
    dvec4 query;       // xyz: the query point (the camera, or the frozen camera); w: the fade fraction
    dvec4 eye;         // xyz: the render camera (records are relative to it); w: bounding-sphere scale
    dvec4 hysteresis;  // x: margin; y: 1 when the margin is a fraction of each radius (cull.glsl's events);
                       // z: 1 colours by LOD band
    vec4 query_f;      // xyz: the query point rounded to float32; w: the prefilter's absolute slack
    uvec4 info;        // x: objects; y: which command field counts (0 sprites: vertices, 1 mesh: instances);
                       // z: 1 when the objects have visibility ranges (the Ranges buffer);
                       // w: LOD switch distances per object (0: none; else the drawn are counted per band)
    uvec4 palette[2];  // the LOD band colours (RGBA bytes), bands 0..7 (viewer.frame.ranges.BAND_PALETTE)
};
