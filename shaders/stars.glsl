#version 330
// Stars (a scene whose look has style = "stars"): one unlit round point sprite per record
// (viewer.instances.INSTANCE_DTYPE), added onto the sky (blend ONE, ONE; no depth test, no fog), so the
// order records arrive in does not matter and overlapping stars add up as light does.
//
// Brightness is the star's apparent magnitude from the camera. A star of absolute magnitude M at distance
// d has m = M + 5 log10(d / 10); its view distance r is where m reaches the limiting magnitude m_lim,
// r = 10 * 10**((m_lim - M) / 5) (viewer/scenes/stars.py), so M cancels and
//
//     dm = m_lim - m = 5 log10(r / d)       magnitudes above the limit (0 at d = r)
//     flux / flux at the limit = (r / d)^2  (the inverse-square law)
//
// In a star field the record's fade is 1 - d / r (viewer.frame: the fade band is the whole view distance),
// so q = d / r = 1 - fade and dm = -5 log10(q). On screen (the eye's response is roughly logarithmic,
// so magnitudes map linearly):
//
//     brightness = clamp(dm / BRIGHT_SPAN, 0, 1)        0 at the limit: a star fades to nothing there
//     diameter   = clamp(SIZE_0 + SIZE_PER_MAG * dm, SIZE_0, SIZE_MAX) * viewport_height / 720  pixels
//
// times the star's colour (its temperature's blackbody colour) and a soft round profile (1 - (x / R)^2)^2
// of radius R = max(diameter / 2, MIN_RADIUS) pixels, x the distance from the star's centre. The point
// drawn is 2 R + 1 pixels wide, so the profile is whole wherever the centre falls inside a pixel (a
// point as small as the profile would lose its sub-pixel stars to the rasteriser's pixel grid).

#define BRIGHT_SPAN 3.5     // magnitudes above the limit to full brightness (d = r / 5)
#define SIZE_0 2.0          // pixels (at a 720-pixel-high view) of a star at its limit
#define SIZE_PER_MAG 2.0    // pixels per magnitude above the limit
#define SIZE_MAX 20.0
#define MIN_RADIUS 1.5      // pixels: the smallest profile that lights its centre pixel wherever it falls

#if defined VERTEX_SHADER

in vec3 in_position;   // per star: centre - eye, world units
in float in_size;      // unused: a star's size on screen is its magnitude's
in vec4 in_colour;     // per star: RGB its temperature's colour, A its opacity (normalised bytes)
in float in_fade;      // per star: 1 - d / r (d: the query camera's distance, r: the view distance)

uniform mat4 m_view;
uniform mat4 m_proj;
uniform float viewport_height;   // pixels
uniform float max_point_size;

out vec3 v_light;      // the star's colour times its brightness
out float v_scale;     // point size / profile diameter: gl_PointCoord to units of the profile's radius

void main() {
    gl_Position = m_proj * (m_view * vec4(in_position, 1.0));
    float q = max(1.0 - in_fade, 1e-12);        // d / r
    float dm = -5.0 * log(q) / log(10.0);       // m_lim - m, magnitudes
    float brightness = clamp(dm / BRIGHT_SPAN, 0.0, 1.0);
    v_light = in_colour.rgb * (brightness * in_colour.a);
    float diameter = clamp(SIZE_0 + SIZE_PER_MAG * dm, SIZE_0, SIZE_MAX) * viewport_height / 720.0;
    float radius = max(diameter / 2.0, MIN_RADIUS);
    float point = min(2.0 * radius + 1.0, max_point_size);
    gl_PointSize = point;
    v_scale = point / (2.0 * radius);
    if (brightness <= 0.0) gl_Position = vec4(2.0, 2.0, 2.0, 1.0);   // at its limit: nothing to draw
}

#elif defined FRAGMENT_SHADER

in vec3 v_light;
in float v_scale;
out vec4 f_colour;

void main() {
    vec2 d = (gl_PointCoord * 2.0 - 1.0) * v_scale;   // in units of the profile's radius
    float rr = dot(d, d);
    if (rr >= 1.0) discard;
    float profile = (1.0 - rr) * (1.0 - rr);    // a soft disc: full at the centre, 0 at the rim
    f_colour = vec4(v_light * profile, 1.0);
}
#endif
