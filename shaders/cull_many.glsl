#version 430
// Many views in one dispatch (GpuCuller.query_many): one invocation per object tests it against every
// view's query point, with the float32 prefilter of shaders/cull.glsl (same bound, a slack per view) and
// then the index contract's exact float64 predicate `(dx*dx + dy*dy) + dz*dz <= r*r`; each hit appends
// (view, object id) through one atomic counter. The CPU orders the pairs by view (CSR). No events, no
// frustum: this answers the index contract's query_many, for a server's clients or any batch of views.
// With visibility ranges (`ranged` 1, the Ranges rows GpuCuller.set_ranges uploads: begin, HLOD limit,
// parent), a hit must also be in range, exactly as shaders/cull.glsl's exact pass and
// viewer.frame._ranges_kernels.filter_ranges decide: begin**2 <= d2, and an HLOD child only while its
// parent's distance is below the parent's limit (dp2 < limit**2).

#if defined COMPUTE_SHADER

layout(local_size_x = 128) in;

// shaders/_cull_buffers.glsl's Objects and Ranges, shaders/cull.glsl's Approx (B_*: viewer.render.shaders.CULL_BINDINGS)
layout(std430, binding = B_OBJECTS) readonly buffer Objects { dvec4 objects[]; };
layout(std430, binding = B_APPROX) readonly buffer Approx { uvec4 approx[]; };
// per view: the query point exact (xyz) ...
layout(std430, binding = 2) readonly buffer Views { dvec4 views[]; };
// ... and rounded to float32, w: the prefilter's absolute slack for that view
layout(std430, binding = 3) readonly buffer ViewsF { vec4 views_f[]; };
// out: (view, id) pairs; pairs past `capacity` are counted, not written (the CPU then runs it again)
layout(std430, binding = 4) writeonly buffer Pairs { uvec2 pairs[]; };
layout(std430, binding = 5) coherent buffer Count { uint count; };
// per object (begin, HLOD limit, parent as a double, -1 none; proxy flag), world units; read when ranged is 1
layout(std430, binding = B_RANGES) readonly buffer Ranges { dvec4 ranges[]; };

uniform uint objects_n;
uniform uint views_n;
uniform uint capacity;
uniform uint ranged;

const uint IN_BIT = 0x80000000u;
const float GROW = 1.0 + 1.0 / 524288.0;  // as shaders/cull.glsl

void main() {
    uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i >= objects_n) return;
    uvec4 a = approx[i];
    vec3 c = uintBitsToFloat(a.xyz);
    float rf = uintBitsToFloat(a.w & ~IN_BIT);
    for (uint v = 0u; v < views_n; ++v) {
        vec4 q = views_f[v];
        precise vec3 e = q.xyz - c;
        precise float d2f = (e.x * e.x + e.y * e.y) + e.z * e.z;
        precise float s = (rf + q.w) * GROW;
        precise float ss = s * s;
        if (d2f > ss) continue;
        dvec4 o = objects[i];
        dvec4 p = views[v];
        precise double dx = p.x - o.x;
        precise double dy = p.y - o.y;
        precise double dz = p.z - o.z;
        precise double d2 = (dx * dx + dy * dy) + dz * dz;
        precise double rr = o.w * o.w;
        bool vis = d2 <= rr;
        if (vis && ranged != 0u) {
            dvec4 rg = ranges[i];
            precise double bb = rg.x * rg.x;
            if (rg.x > 0.0lf && d2 < bb) vis = false;
            int par = int(rg.z);
            if (vis && par >= 0) {
                dvec4 po = objects[par];
                precise double px = p.x - po.x;
                precise double py = p.y - po.y;
                precise double pz = p.z - po.z;
                precise double dp2 = (px * px + py * py) + pz * pz;
                precise double lim = ranges[par].y;
                precise double ll = lim * lim;
                if (!(dp2 < ll)) vis = false;
            }
        }
        if (vis) {
            uint slot = atomicAdd(count, 1u);
            if (slot < capacity) pairs[slot] = uvec2(v, i);
        }
    }
}
#endif
