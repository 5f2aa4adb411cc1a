#version 430
// A scene drawn with its own meshes, culled on the GPU (viewer/render/gpu_mesh_groups.py): the records
// shaders/cull.glsl wrote (one per drawn object, in slot order) grouped by the mesh each object draws (its
// base mesh, or with LOD bands the mesh of its band, viewer.frame.mesh_batches.MeshBatches.group's rule),
// three passes, no readback between them:
// COUNT, one invocation per record: its mesh (none: -1 in the LOD table), its place within that mesh's
//   group (an atomic counter per mesh, the group's indirect draw command's instance count);
// PREFIX, one invocation: each mesh's first record (a running sum over the meshes) into its command's
//   baseInstance, and its vertex count;
// SCATTER, one invocation per record: the record and the object's mesh transform (the 72-byte
//   viewer.frame.mesh_batches.MESH_INSTANCE_DTYPE) written at its group's first record + its place.
// Then one indirect instanced draw per mesh (commands of 5 words, moderngl's 20-byte stride).
// Defines: COUNT, PREFIX or SCATTER; INSTANCE_WORDS from the shader loader.

#if defined COMPUTE_SHADER

#if defined PREFIX
layout(local_size_x = 1) in;
#else
layout(local_size_x = 128) in;
#endif

layout(std430, binding = 0) readonly buffer DrawnIds { uint drawn_ids[]; };     // per record, its object
layout(std430, binding = 1) readonly buffer DrawnBands { uint drawn_bands[]; }; // per record, its LOD band
layout(std430, binding = 2) readonly buffer Command { uint command[4]; };       // the cull's draw command
layout(std430, binding = 3) readonly buffer MeshOf { uint mesh_of[]; };         // per object, its base mesh
layout(std430, binding = 4) readonly buffer Lods { int lods[]; };               // (K, B): mesh per base mesh per band
layout(std430, binding = 5) coherent buffer Commands { uint cmds[]; };  // per mesh: count, instances, first, base, 0
layout(std430, binding = 6) coherent buffer Places { uvec2 places[]; };        // per record: (mesh or NONE, place)
layout(std430, binding = 7) readonly buffer Records { uint records[]; };        // INSTANCE_WORDS per record
layout(std430, binding = 8) writeonly buffer Out { uint out_records[]; };      // MESH_WORDS per record, grouped
layout(std430, binding = 9) readonly buffer Affine { uint affine[]; };          // per object, 12 float32 words
layout(std430, binding = 10) readonly buffer VertexCounts { uint vertex_counts[]; };  // per mesh

uniform uint meshes;     // K
uniform uint columns;    // B (columns of the LOD table)
uniform uint has_bands;  // 1: group by the band's mesh; 0: by the base mesh

const uint NONE = 0xffffffffu;
const uint MESH_WORDS = uint(INSTANCE_WORDS) + 12u;

#if defined PREFIX
void main() {
    uint sum = 0u;
    for (uint k = 0u; k < meshes; ++k) {
        uint c = cmds[k * 5u + 1u];
        cmds[k * 5u] = vertex_counts[k];
        cmds[k * 5u + 2u] = 0u;
        cmds[k * 5u + 3u] = sum;
        sum += c;
    }
}
#else
void main() {
    uint n = command[1];  // the drawn records (the mesh draw's instance count)
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint j = gl_GlobalInvocationID.x; j < n; j += stride) {
        uint id = drawn_ids[j];
#if defined COUNT
        uint m = mesh_of[id];
        if (has_bands != 0u) {
            int lm = lods[m * columns + min(drawn_bands[j], columns - 1u)];
            m = lm < 0 ? NONE : uint(lm);
        }
        places[j] = m == NONE ? uvec2(NONE, 0u) : uvec2(m, atomicAdd(cmds[m * 5u + 1u], 1u));
#else
        uvec2 p = places[j];
        if (p.x == NONE) continue;
        uint dst = (cmds[p.x * 5u + 3u] + p.y) * MESH_WORDS;
        uint src = j * uint(INSTANCE_WORDS);
        for (uint w = 0u; w < uint(INSTANCE_WORDS); ++w) out_records[dst + w] = records[src + w];
        for (uint w = 0u; w < 12u; ++w) out_records[dst + uint(INSTANCE_WORDS) + w] = affine[id * 12u + w];
#endif
    }
}
#endif
#endif
