#version 330
// HUD graph: flat-coloured triangles given in pixels from the top-left (the live stage-time graph).

#if defined VERTEX_SHADER

in vec2 in_px;        // pixels from the top-left of the framebuffer
in vec4 in_colour;    // RGBA

uniform vec2 viewport;  // pixels

out vec4 v_colour;

void main() {
    v_colour = in_colour;
    gl_Position = vec4(in_px.x / viewport.x * 2.0 - 1.0, 1.0 - in_px.y / viewport.y * 2.0, 0.0, 1.0);
}

#elif defined FRAGMENT_SHADER

in vec4 v_colour;
out vec4 f_colour;

void main() {
    f_colour = v_colour;
}
#endif
