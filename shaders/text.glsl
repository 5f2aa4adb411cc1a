#version 330
// HUD text: one instanced quad per character, glyphs from a grid atlas (single channel coverage).

#if defined VERTEX_SHADER

in vec2 in_corner;     // quad corner, [0, 1]^2
in vec3 in_char;       // per instance: column, row (cells from the top-left), glyph index

uniform vec2 viewport;     // pixels
uniform vec2 cell;         // glyph cell size, pixels
uniform vec2 origin;       // top-left of the text block, pixels from the top-left
uniform vec2 atlas_grid;   // glyph columns, rows in the atlas

out vec2 v_uv;

void main() {
    vec2 px = origin + (in_char.xy + vec2(in_corner.x, 1.0 - in_corner.y)) * cell;
    vec2 ndc = vec2(px.x / viewport.x * 2.0 - 1.0, 1.0 - px.y / viewport.y * 2.0);
    float g = in_char.z;
    vec2 slot = vec2(mod(g, atlas_grid.x), floor(g / atlas_grid.x));
    v_uv = (slot + vec2(in_corner.x, 1.0 - in_corner.y)) / atlas_grid;
    gl_Position = vec4(ndc, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

in vec2 v_uv;
uniform sampler2D atlas;
uniform vec4 colour;
uniform vec4 shadow;
out vec4 f_colour;

void main() {
    float a = texture(atlas, v_uv).r;
    f_colour = mix(shadow, colour, a);
}
#endif
