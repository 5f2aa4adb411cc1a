#version 330
// Index nodes as wire cubes (GL_LINES, 24 vertices per box, instanced); the nodes the last query
// visited are highlighted.

#if defined VERTEX_SHADER

in vec3 in_position;   // unit cube corner, [0, 1]^3
in vec4 in_box;        // per instance: x0 - eye, y0 - eye, z0 - eye, edge
in float in_visited;   // per instance: 1 visited by the last query, else 0

uniform mat4 m_view;
uniform mat4 m_proj;

out float v_visited;

void main() {
    v_visited = in_visited;
    gl_Position = m_proj * m_view * vec4(in_box.xyz + in_position * in_box.w, 1.0);
}

#elif defined FRAGMENT_SHADER

in float v_visited;
uniform vec4 colour_idle;
uniform vec4 colour_visited;
out vec4 f_colour;

void main() {
    f_colour = v_visited > 0.5 ? colour_visited : colour_idle;
}
#endif
