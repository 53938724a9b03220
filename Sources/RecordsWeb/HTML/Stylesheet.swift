import Foundation

/// The site's one stylesheet (`Resources/style.css`): readable type, a calm
/// palette, forms and lists that work from a phone's width to a desktop's.
enum Stylesheet {
    /// The stylesheet's text.
    static let text = StaticFiles.resource(PackageResources.style_css)
}
