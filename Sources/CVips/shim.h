#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

// libvips (Debian: libvips-dev, installed by scripts/bootstrap.sh) for the
// Thumbnails target. Swift cannot call C's variadic functions, and most of
// libvips' API takes its optional arguments as a NULL-terminated list, so
// the calls Thumbnails (and its tests) make are fixed-argument wrappers
// here.

#include <vips/vips.h>

#if VIPS_MAJOR_VERSION < 8 || (VIPS_MAJOR_VERSION == 8 && VIPS_MINOR_VERSION < 13)
#error "Thumbnails needs libvips 8.13 or later (vips_operation_block_set, fail_on)"
#endif

/// A custom source's callbacks: read up to `length` bytes into `buffer`
/// (0 at the end, -1 on an error); seek like lseek (-1 when it cannot).
typedef gint64 (*cvips_read_callback)(void *context, void *buffer, gint64 length);
typedef gint64 (*cvips_seek_callback)(void *context, gint64 offset, int whence);

typedef struct {
    cvips_read_callback read;
    cvips_seek_callback seek;
    void *context;
} cvips_source_callbacks;

static gint64 cvips_on_read(VipsSourceCustom *source, void *buffer, gint64 length, void *user) {
    (void)source;
    cvips_source_callbacks *callbacks = (cvips_source_callbacks *)user;
    return callbacks->read(callbacks->context, buffer, length);
}

static gint64 cvips_on_seek(VipsSourceCustom *source, gint64 offset, int whence, void *user) {
    (void)source;
    cvips_source_callbacks *callbacks = (cvips_source_callbacks *)user;
    return callbacks->seek(callbacks->context, offset, whence);
}

/// A source that reads through `callbacks`, which must outlive it.
static inline VipsSource *cvips_source_custom(cvips_source_callbacks *callbacks) {
    VipsSourceCustom *source = vips_source_custom_new();
    if (source == NULL) return NULL;
    g_signal_connect(source, "read", G_CALLBACK(cvips_on_read), callbacks);
    g_signal_connect(source, "seek", G_CALLBACK(cvips_on_seek), callbacks);
    return VIPS_SOURCE(source);
}

static void cvips_ignore_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user) {
    (void)domain;
    (void)level;
    (void)message;
    (void)user;
}

/// Keeps libvips' own warnings (a damaged image's, line by line) off
/// standard error: the caller reports what failed.
static inline void cvips_quiet(void) {
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG,
        cvips_ignore_log, NULL);
}

static inline VipsSource *cvips_source_memory(const void *data, size_t length) {
    return vips_source_new_from_memory(data, length);
}

/// The image's header only (pixels are decoded later, if at all),
/// sequential access, failing on errors and truncation.
static inline VipsImage *cvips_header(VipsSource *source) {
    return vips_image_new_from_source(source, "", "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR,
        NULL);
}

/// A thumbnail that fits `width` x `height`, never enlarged, made with
/// shrink-on-load, failing on errors and truncation. libvips 8.14 does not
/// pass the thumbnail's own `fail_on` to a JPEG's shrink-on-load load (a
/// cut-short JPEG gave a half-grey thumbnail), so the loader's options say
/// it too.
static inline int cvips_thumbnail(VipsSource *source, VipsImage **out, int width, int height) {
    return vips_thumbnail_source(source, out, width, "height", height, "size", VIPS_SIZE_DOWN, "fail_on",
        VIPS_FAIL_ON_ERROR, "option_string", "[fail_on=error]", NULL);
}

static inline int cvips_jpeg(VipsImage *image, void **buffer, size_t *length, int quality) {
    return vips_jpegsave_buffer(image, buffer, length, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
}

static inline int cvips_png(VipsImage *image, void **buffer, size_t *length) {
    return vips_pngsave_buffer(image, buffer, length, "compression", 9, "strip", TRUE, NULL);
}

static inline void cvips_unref(void *object) {
    if (object != NULL) g_object_unref(object);
}

// For tests: images made by libvips, and thumbnails read back.

/// A `width` x `height` image of `bands` bands of Gaussian noise (8 bits).
static inline VipsImage *cvips_noise(int width, int height, int bands) {
    VipsImage *noise = NULL, *cast = NULL, *joined = NULL;
    VipsImage *parts[4] = {NULL, NULL, NULL, NULL};
    if (bands < 1 || bands > 4) return NULL;
    for (int band = 0; band < bands; band++) {
        if (vips_gaussnoise(&parts[band], width, height, "sigma", 60.0, "mean", 128.0, NULL) != 0) goto done;
    }
    if (vips_bandjoin(parts, &joined, bands, NULL) != 0) goto done;
    if (vips_cast(joined, &cast, VIPS_FORMAT_UCHAR, NULL) != 0) goto done;
    vips_copy(cast, &noise, "interpretation", bands >= 3 ? VIPS_INTERPRETATION_sRGB : VIPS_INTERPRETATION_B_W, NULL);
done:
    for (int band = 0; band < 4; band++) cvips_unref(parts[band]);
    cvips_unref(joined);
    cvips_unref(cast);
    return noise;
}

static inline int cvips_save(VipsImage *image, const char *path) {
    return vips_image_write_to_file(image, path, NULL);
}

static inline VipsImage *cvips_load_buffer(const void *data, size_t length) {
    return vips_image_new_from_buffer(data, length, "", "fail_on", VIPS_FAIL_ON_ERROR, NULL);
}

/// Decodes every pixel (their average): 0, or -1 for a damaged image.
static inline int cvips_decode_all(VipsImage *image) {
    double average = 0;
    return vips_avg(image, &average, NULL);
}

#endif
