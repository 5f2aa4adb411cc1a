#version 330
// Instanced low-poly mesh (a cube of half-extent `size`), lit, fogged, faded in by dithering.
// Instance positions are relative to the camera; m_view is the view rotation only.

#if defined VERTEX_SHADER

in vec3 in_position;   // unit cube corner, [-1, 1]^3
in vec3 in_normal;
in vec3 in_offset;     // per instance: centre - eye, world units
in float in_size;      // per instance: half-extent
in vec4 in_colour;     // per instance: RGBA (normalised bytes)
in float in_fade;      // per instance: 1 inside, -> 0 at the view distance

uniform mat4 m_view;
uniform mat4 m_proj;

out vec3 v_normal;     // eye space
out vec3 v_eye_pos;    // eye space
out vec4 v_colour;
out float v_fade;

void main() {
    vec4 eye_pos = m_view * vec4(in_offset + in_position * in_size, 1.0);
    v_eye_pos = eye_pos.xyz;
    v_normal = mat3(m_view) * in_normal;
    v_colour = in_colour;
    v_fade = in_fade * in_colour.a;
    gl_Position = m_proj * eye_pos;
}

#elif defined FRAGMENT_SHADER

in vec3 v_normal;
in vec3 v_eye_pos;
in vec4 v_colour;
in float v_fade;

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
    if (v_fade < bayer4(gl_FragCoord.xy)) discard;
    vec3 n = normalize(v_normal);
    float diffuse = max(dot(n, light_dir), 0.0);
    vec3 c = v_colour.rgb * (ambient + (1.0 - ambient) * diffuse);
    float fog = 1.0 - exp(-fog_density * length(v_eye_pos));
    f_colour = vec4(mix(c, fog_colour, clamp(fog, 0.0, 1.0)), 1.0);
}
#endif
