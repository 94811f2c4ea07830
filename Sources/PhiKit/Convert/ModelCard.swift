/// The README.md `mlx_lm.convert` writes (`create_model_card`): YAML front matter and no text.
///
/// For a local source mlx_lm renders `ModelCard.from_template(ModelCardData(language="en"))`,
/// whose bytes we reproduce exactly. For a Hub source it edits the repo's own card (fetched
/// from the network); phikit never goes online here, so it writes the same keys mlx_lm adds
/// (`base_model`, `library_name: mlx`, `pipeline_tag`, the `mlx` tag) on a fresh card.
enum ModelCard {
    static func text(baseModel: String?) -> String {
        var lines = ["---"]
        if let baseModel {
            lines.append("base_model: \(baseModel)")
        } else {
            lines.append("language: en")
        }
        lines += [
            "library_name: mlx", "pipeline_tag: text-generation", "tags:", "- mlx", "---", "",
        ]
        return lines.joined(separator: "\n")
    }
}
