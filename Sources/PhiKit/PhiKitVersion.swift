/// The version `phikit --version` prints and `convert` records in model cards.
public enum PhiKitVersion {
    public static let string = "0.1.0"
}
