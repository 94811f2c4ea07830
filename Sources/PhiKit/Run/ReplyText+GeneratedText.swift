import PhiEngine
import PhiText

/// The engine's `Generator` turns tokens into visible text through PhiText's `ReplyText`: one
/// decoder and one stop-string matcher for run, chat, serve and apps.
extension ReplyText: GeneratedText {}
