#version 330
// The objects, one record per object (viewer.instances.INSTANCE_DTYPE: in_position, in_size, in_colour,
// in_fade), lit, fogged and faded in by dithering. Two variants of one program:
//   (default)         instanced low-poly mesh: a cube of half-extent `size` per instance
//   #define FILE_MESH an imported scene's own mesh (viewer.mesh_batches): per instance also the mesh's
//                     local-to-world linear map (in_affine0..2, its columns) and translation minus the
//                     object's centre (in_offset); drawn two-sided (files mirror and leave meshes open)
//   #define SPRITES   point-sprite impostors: one point per object, shaded as a sphere of radius `size` in
//                     the fragment shader. Much cheaper than meshes on a software rasteriser. Needs
//                     PROGRAM_POINT_SIZE; point sizes are clamped to the implementation's range. Depth is
//                     the centre's (flat discs): writing gl_FragDepth for the sphere surface would turn off
//                     early depth testing, which with instances drawn nearest first saves several times
//                     the fill cost on llvmpipe.
// Positions are relative to the camera; m_view is the view rotation only.

#if defined VERTEX_SHADER

in vec3 in_position;   // per object: centre - eye, world units
in float in_size;      // per object: half-extent (sprites: radius)
in vec4 in_colour;     // per object: RGBA (normalised bytes)
in float in_fade;      // per object: 1 inside, -> 0 at the view distance

uniform mat4 m_view;
uniform mat4 m_proj;

out vec3 v_eye_pos;    // eye space
out vec4 v_colour;
out float v_fade;

#if defined SPRITES
uniform float viewport_height;   // pixels
uniform float max_point_size;
#else
in vec3 in_vertex;     // unit cube corner, [-1, 1]^3 (FILE_MESH: the mesh's vertex, local coordinates)
in vec3 in_normal;
out vec3 v_normal;     // eye space
#if defined FILE_MESH
in vec3 in_affine0;    // per object: the columns of the mesh's local-to-world linear map
in vec3 in_affine1;
in vec3 in_affine2;
in vec3 in_offset;     // per object: the map's translation minus the object's centre, world units
#endif
#endif

void main() {
#if defined SPRITES
    vec4 eye_pos = m_view * vec4(in_position, 1.0);
#elif defined FILE_MESH
    mat3 a = mat3(in_affine0, in_affine1, in_affine2);
    vec4 eye_pos = m_view * vec4(in_position + in_offset + a * in_vertex, 1.0);
    v_normal = mat3(m_view) * (transpose(inverse(a)) * in_normal);
#else
    vec4 eye_pos = m_view * vec4(in_position + in_vertex * in_size, 1.0);
    v_normal = mat3(m_view) * in_normal;
#endif
    v_eye_pos = eye_pos.xyz;
    v_colour = in_colour;
    v_fade = in_fade * in_colour.a;
    gl_Position = m_proj * eye_pos;
#if defined SPRITES
    float depth = max(-eye_pos.z, 1e-4);
    // diameter in pixels: 2 * size * (proj[1][1] / depth) * (height / 2)
    gl_PointSize = clamp(in_size * m_proj[1][1] * viewport_height / depth, 1.0, max_point_size);
#endif
}

#elif defined FRAGMENT_SHADER

in vec3 v_eye_pos;
in vec4 v_colour;
in float v_fade;
#if !defined SPRITES
in vec3 v_normal;
#endif

uniform vec3 light_dir;     // eye space, towards the light, unit
uniform vec3 fog_colour;
uniform float fog_density;  // per world unit; 0 turns fog off
uniform float ambient;

out vec4 f_colour;

// 4x4 ordered dither: screen-door transparency needs no sorting and no blending
float bayer4(vec2 p) {
    ivec2 q = ivec2(mod(p, 4.0));
    int i = q.x + 4 * q.y;
    const float m[16] = float[16](0.0, 8.0, 2.0, 10.0, 12.0, 4.0, 14.0, 6.0,
                                  3.0, 11.0, 1.0, 9.0, 15.0, 7.0, 13.0, 5.0);
    return (m[i] + 0.5) / 16.0;
}

void main() {
#if defined SPRITES
    vec2 d = gl_PointCoord * 2.0 - 1.0;
    float rr = dot(d, d);
    if (rr > 1.0) discard;
#endif
    if (v_fade < bayer4(gl_FragCoord.xy)) discard;
#if defined SPRITES
    vec3 n = vec3(d.x, -d.y, sqrt(1.0 - rr));   // the sphere's normal under this fragment
#else
    vec3 n = normalize(v_normal);
#if defined FILE_MESH
    if (!gl_FrontFacing) n = -n;
#endif
#endif
    float diffuse = max(dot(n, light_dir), 0.0);
    vec3 c = v_colour.rgb * (ambient + (1.0 - ambient) * diffuse);
    float fog = 1.0 - exp(-fog_density * length(v_eye_pos));
    f_colour = vec4(mix(c, fog_colour, clamp(fog, 0.0, 1.0)), 1.0);
}
#endif
