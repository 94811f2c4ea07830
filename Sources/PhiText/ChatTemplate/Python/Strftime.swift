import Foundation

/// Python's `datetime.now().strftime(format)` in the C locale, in the local time zone, for
/// the directives chat templates use (`"%d %b %Y"`, `"%B %d, %Y"`, `"%Y-%m-%d"`…). An
/// unknown directive is an error rather than a different date.
enum Strftime {
    private static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December",
    ]
    private static let weekdays = [
        "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
    ]

    static func format(
        _ format: String, _ date: Date, timeZone: TimeZone = .current
    ) throws -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let (year, month, day) = (c.year!, c.month!, c.day!)
        let (hour, minute, second, weekday) = (c.hour!, c.minute!, c.second!, c.weekday! - 1)
        let dayOfYear = calendar.ordinality(of: .day, in: .year, for: date) ?? 1
        func pad(_ n: Int, _ width: Int = 2) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        var out = ""
        var chars = Array(format)[...]
        while let ch = chars.popFirst() {
            guard ch == "%" else {
                out.append(ch)
                continue
            }
            guard let directive = chars.popFirst() else {
                out.append("%")
                break
            }
            switch directive {
            case "a": out += String(weekdays[weekday].prefix(3))
            case "A": out += weekdays[weekday]
            case "b", "h": out += String(months[month - 1].prefix(3))
            case "B": out += months[month - 1]
            case "d": out += pad(day)
            case "e": out += (day < 10 ? " " : "") + String(day)
            case "m": out += pad(month)
            case "y": out += pad(year % 100)
            case "Y": out += String(year)
            case "H": out += pad(hour)
            case "I": out += pad(hour % 12 == 0 ? 12 : hour % 12)
            case "M": out += pad(minute)
            case "S": out += pad(second)
            case "p": out += hour < 12 ? "AM" : "PM"
            case "j": out += pad(dayOfYear, 3)
            case "w": out += String(weekday)
            case "D": out += pad(month) + "/" + pad(day) + "/" + pad(year % 100)
            case "F": out += String(year) + "-" + pad(month) + "-" + pad(day)
            case "T": out += pad(hour) + ":" + pad(minute) + ":" + pad(second)
            case "%": out += "%"
            default:
                throw JinjaError.render("strftime_now: unsupported directive '%\(directive)'")
            }
        }
        return out
    }
}
