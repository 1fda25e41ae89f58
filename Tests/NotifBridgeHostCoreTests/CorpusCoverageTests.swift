import Foundation
import NotifBridgeAccessoryCore
import NotifBridgeHostCore
import NotifBridgeTestSupport
import Testing

/// The corpus is only useful while it keeps covering what real notifications throw at an
/// accessory; each case names one thing and how to recognise it.
@Suite("Fixture corpus coverage")
struct CorpusCoverageTests {
    enum Feature: String, CaseIterable, Sendable {
        case messageThread, mail, calendarWithDisplayDate, incomingCall, timer, twoFactorCode
        case critical, timeSensitive, ignoresSilentMode, suppressedByFocus
        case arabic, hebrew, bidiMark, chinese, japanese, korean
        case zwjSequence, skinTone, flag, tagSequence, genmojiGlyph
        case sourceIcon, contextIcon, attachment, summary
        case bodyNearSmallScreen, bodyOverSmallScreen, bodyOverThousandCharacters, titleAtLimit
        case update, remove
    }

    struct Corpus {
        var adds: [(notification: HostNotification, alerting: HostAlerting)] = []
        var updates: [HostNotification] = []
        var removes = 0

        var notifications: [HostNotification] { adds.map(\.notification) + updates }
        var texts: [String] {
            notifications.flatMap { [$0.title, $0.subtitle, $0.body] + ($0.bodyRuns ?? []).map(\.text) }.compactMap { $0 }
        }
        var bodies: [String] { notifications.compactMap(\.body) }

        func anyText(_ scalars: ClosedRange<UInt32>) -> Bool {
            texts.contains { $0.unicodeScalars.contains { scalars.contains($0.value) } }
        }
    }

    static func corpus() throws -> Corpus {
        var corpus = Corpus()
        for name in try TestFixtures.corpusNames() {
            for operation in try HostOperation.list(fromJSON: TestFixtures.data("corpus/\(name)")) {
                switch operation {
                case .add(let notification, let alerting): corpus.adds.append((notification, alerting))
                case .update(let notification): corpus.updates.append(notification)
                case .remove, .removeAll: corpus.removes += 1
                }
            }
        }
        return corpus
    }

    @Test("The corpus covers", arguments: Feature.allCases)
    func covers(_ feature: Feature) throws {
        #expect(Self.isCovered(feature, by: try Self.corpus()))
    }

    static func isCovered(_ feature: Feature, by corpus: Corpus) -> Bool {
        let notifications = corpus.notifications
        switch feature {
        case .messageThread:
            let threads = Dictionary(grouping: corpus.adds.map(\.notification).filter { $0.thread != nil }) { "\($0.source) \($0.thread ?? "")" }
            return threads.values.contains { $0.count >= 3 }
        case .mail:
            return notifications.contains { $0.source == "com.apple.mobilemail" && $0.title != nil && $0.subtitle != nil && $0.body != nil }
        case .calendarWithDisplayDate:
            return notifications.contains { $0.attributes?.contains(.timeSensitive) == true && $0.displayDate?.kind == .content && $0.displayDate?.date != nil }
        case .incomingCall: return corpus.adds.contains { $0.alerting.kind == .incomingCall }
        case .timer: return corpus.adds.contains { $0.alerting.kind == .timer }
        case .twoFactorCode: return corpus.bodies.contains { $0.contains(/#\d{6}\b/) }
        case .critical: return notifications.contains { $0.attributes?.contains(.critical) == true }
        case .timeSensitive: return notifications.contains { $0.attributes?.contains(.timeSensitive) == true }
        case .ignoresSilentMode: return corpus.adds.contains { $0.alerting.sound?.ignoreSilentMode == true }
        case .suppressedByFocus: return corpus.adds.contains { $0.alerting.suppressedByFocus }
        case .arabic: return corpus.anyText(0x0600...0x06FF)
        case .hebrew: return corpus.anyText(0x0590...0x05FF)
        case .bidiMark: return corpus.anyText(0x200E...0x200F)
        case .chinese: return corpus.anyText(0x4E00...0x9FFF)
        case .japanese: return corpus.anyText(0x3040...0x30FF) && corpus.anyText(0xFF61...0xFF9F)
        case .korean: return corpus.anyText(0xAC00...0xD7AF)
        case .zwjSequence: return corpus.anyText(0x200D...0x200D)
        case .skinTone: return corpus.anyText(0x1F3FB...0x1F3FF)
        case .flag: return corpus.anyText(0x1F1E6...0x1F1FF)
        case .tagSequence: return corpus.anyText(0xE0020...0xE007F)
        case .genmojiGlyph: return notifications.contains { $0.bodyRuns?.contains { $0.glyph?.image != nil } == true }
        case .sourceIcon: return notifications.contains { $0.sourceIcon != nil }
        case .contextIcon: return notifications.contains { $0.contextIcon != nil }
        case .attachment: return notifications.contains { $0.attachments?.isEmpty == false }
        case .summary: return notifications.contains { $0.summary != nil }
        // A 4×18 watch screen shows about 54 characters of body, an 8×40 e-ink one about 300.
        case .bodyNearSmallScreen: return corpus.bodies.contains { (40...64).contains($0.count) }
        case .bodyOverSmallScreen: return corpus.bodies.contains { (321...1000).contains($0.count) }
        case .bodyOverThousandCharacters: return corpus.bodies.contains { $0.count > 1000 }
        case .titleAtLimit: return notifications.contains { $0.title?.utf8.count == ContentLimits.maxTextFieldLength }
        case .update: return !corpus.updates.isEmpty
        case .remove: return corpus.removes > 0
        }
    }
}
