import Foundation

/// The live pages' script (`Resources/live.js`), served as a static file
/// (the site's Content-Security-Policy allows no inline script). See
/// ``Layout`` for the markup it works on.
enum LiveScript {
    /// The script's text.
    static let text = StaticFiles.resource(PackageResources.live_js)
}
