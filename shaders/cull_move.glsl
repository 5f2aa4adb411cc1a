#version 430
// GPU culling's update stage: writes the movers' new (x, y, z, view radius) into the object buffer that
// shaders/cull.glsl reads, one invocation per mover (only the movers' records cross the bus).

#if defined COMPUTE_SHADER

layout(local_size_x = 128) in;

layout(std430, binding = 0) writeonly buffer Objects { dvec4 objects[]; };
layout(std430, binding = 7) readonly buffer Moves { dvec4 moved[]; };    // new (x, y, z, r) per mover
layout(std430, binding = 8) readonly buffer MoveIds { uint moved_ids[]; };

uniform uint n_moved;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < n_moved) objects[moved_ids[i]] = moved[i];
}
#endif
