#version 430
// GPU culling's update stage (see shaders/cull.glsl): mode 0 writes the movers' new (x, y, z, view
// radius) into the exact object buffer and its float32 copy, one invocation per mover, keeping each
// object's "in" bit (so only the movers' rows cross the bus); mode 1 clears every "in" bit (the
// visibility events start over).

#if defined COMPUTE_SHADER

layout(local_size_x = 128) in;

// shaders/_cull_buffers.glsl's Objects and shaders/cull.glsl's Approx (B_*: viewer.render.shaders.CULL_BINDINGS)
layout(std430, binding = B_OBJECTS) writeonly buffer Objects { dvec4 objects[]; };
layout(std430, binding = B_APPROX) coherent buffer Approx { uvec4 approx[]; };
layout(std430, binding = 7) readonly buffer Moves { dvec4 moved[]; };    // new (x, y, z, r) per mover
layout(std430, binding = 8) readonly buffer MoveIds { uint moved_ids[]; };

uniform uint count;   // movers (mode 0) or objects (mode 1)
uniform uint mode;

const uint IN_BIT = 0x80000000u;

void main() {
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= count) return;
    if (mode == 1u) {
        approx[i].w &= ~IN_BIT;
        return;
    }
    uint id = moved_ids[i];
    dvec4 m = moved[i];
    objects[id] = m;
    uint in_bit = approx[id].w & IN_BIT;
    approx[id] = uvec4(floatBitsToUint(vec3(m.xyz)), floatBitsToUint(float(m.w)) | in_bit);
}
#endif
