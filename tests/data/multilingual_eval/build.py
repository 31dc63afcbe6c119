"""Write the multilingual memory set (deterministic; stdlib only).

    python tests/data/multilingual_eval/build.py

Daily logs in Chinese, Japanese, Korean, Vietnamese and English (a control), each log in
one language: remembered facts among everyday small talk. For every fact three questions:

* ``substring``: a phrase copied from the note (what a user pastes or half-remembers);
* ``short``: one short word of the note - two characters in Chinese and Japanese, a
  two-syllable word in Korean (its particle stripped), one word in Vietnamese and English;
* ``paraphrase``: the question someone would ask later, in the note's language, sharing
  few of its words.

Each language's facts are split in two halves: ``"split": "tune"`` (free to look at while
choosing settings) and ``"split": "held"`` (never used to choose them). Everything here is
invented; each golden entry carries its ``lang``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: per language: (note, substring, short word, paraphrase question); the first half tunes
FACTS: dict[str, list[tuple[str, str, str, str]]] = {
    "zh": [
        ("我女儿每周三下午去少年宫学钢琴", "每周三下午去少年宫", "钢琴", "孩子星期三学什么乐器"),
        ("王阿姨的新手机号码尾号是8832", "新手机号码尾号", "阿姨", "怎么给王姨打电话"),
        ("备用钥匙放在门口蓝色花盆下面", "蓝色花盆下面", "钥匙", "家里没人的时候怎么进门"),
        ("老李对花生过敏，聚餐时别点宫保鸡丁", "对花生过敏", "花生", "老李有什么东西不能吃"),
        ("车子开到三万公里时需要换机油", "三万公里", "机油", "汽车什么时候该去保养"),
        ("房东说明年三月起房租涨到四千五", "房租涨到四千五", "房东", "明年住的地方每月要付多少钱"),
        ("小张下个月去深圳一家设计公司上班", "深圳一家设计公司", "深圳", "小张换工作去哪个城市"),
        ("周日早上和同事在体育馆打羽毛球", "在体育馆打羽毛球", "羽毛", "周末做什么运动"),
        ("护照快到期了，要在六月前去出入境办理换证", "六月前去出入境", "护照", "出国的证件什么时候要更新"),
        ("爸爸下午四点以后只喝无咖啡因的咖啡", "无咖啡因的咖啡", "咖啡", "晚上给父亲准备什么饮料"),
    ],
    "ja": [
        ("娘は毎週水曜日にピアノ教室へ通っている", "毎週水曜日にピアノ", "教室", "子どもは何曜日に習い事がある"),
        ("鈴木さんの新しい携帯番号の末尾は4471", "新しい携帯番号", "携帯", "鈴木さんに電話するにはどうする"),
        ("合鍵は玄関の青い植木鉢の下に置いてある", "青い植木鉢の下", "合鍵", "留守のときどうやって家に入る"),
        ("田中さんはエビとカニのアレルギーがある", "エビとカニのアレルギー", "田中", "田中さんが食べられないものは"),
        ("車は四万五千キロでオイル交換が必要", "オイル交換が必要", "交換", "車の整備はいつ頃すればいい"),
        ("大家さんによると来年の春から家賃が八万円になる", "家賃が八万円", "家賃", "来年から部屋代はいくら払う"),
        ("佐藤さんは十月から大阪の病院で薬剤師として働く", "大阪の病院で薬剤師", "大阪", "佐藤さんの新しい仕事は何"),
        ("日曜の朝は公園でテニスの練習をしている", "公園でテニスの練習", "公園", "週末の朝にするスポーツは"),
        ("パスポートの更新には区役所で写真が必要", "区役所で写真が必要", "写真", "旅券を新しくするのに何がいる"),
        ("父は夕方以降カフェインレスのコーヒーしか飲まない", "カフェインレスのコーヒー", "夕方", "夜、父に出す飲み物は何がいい"),
    ],
    "ko": [
        ("딸은 매주 수요일 오후에 피아노 학원에 다닌다", "수요일 오후에 피아노", "학원", "아이가 수요일에 배우는 악기는"),
        ("이모의 새 휴대폰 번호 끝자리는 5519이다", "새 휴대폰 번호", "이모", "이모한테 어떻게 연락하지"),
        ("여분 열쇠는 현관 앞 파란 화분 밑에 있다", "파란 화분 밑에", "열쇠", "집에 아무도 없을 때 어떻게 들어가"),
        ("민수는 땅콩 알레르기가 있어서 견과류를 못 먹는다", "땅콩 알레르기", "민수", "민수가 먹으면 안 되는 음식"),
        ("자동차는 오만 킬로미터에서 엔진오일을 갈아야 한다", "엔진오일을 갈아야", "자동", "차 정비는 언제 받아야 하나"),
        ("집주인이 내년 삼월부터 월세를 올린다고 했다", "월세를 올린다고", "월세", "내년부터 집세가 어떻게 되나"),
        ("지영이는 다음 달부터 부산 디자인 회사에 출근한다", "부산 디자인 회사", "부산", "지영이는 어느 도시로 직장을 옮기나"),
        ("일요일 아침마다 동료들과 체육관에서 배드민턴을 친다", "체육관에서 배드민턴", "체육", "주말 아침에 하는 운동은"),
        ("여권 갱신하려면 구청에 사진을 가져가야 한다", "구청에 사진을", "여권", "해외여행 서류를 새로 만들 때 필요한 것"),
        ("아버지는 오후 네 시 이후에는 디카페인 커피만 드신다", "디카페인 커피만", "커피", "저녁에 아빠께 어떤 음료를 드릴까"),
    ],
    "vi": [
        ("Con gái tôi học đàn piano ở nhà văn hóa vào chiều thứ Tư", "nhà văn hóa vào chiều thứ Tư", "đàn",
         "bé học nhạc cụ gì vào giữa tuần"),
        ("Số điện thoại mới của dì Hoa có đuôi 7723", "điện thoại mới", "dì", "làm sao gọi cho dì Hoa"),
        ("Chìa khóa dự phòng để dưới chậu hoa màu xanh trước cửa", "dưới chậu hoa màu xanh", "chậu",
         "không có ai ở nhà thì vào bằng cách nào"),
        ("Anh Tuấn bị dị ứng tôm cua nên đừng gọi lẩu hải sản", "dị ứng tôm cua", "tôm", "anh Tuấn kiêng món gì"),
        ("Xe máy cần thay nhớt sau mỗi hai nghìn cây số", "thay nhớt sau mỗi", "nhớt", "khi nào phải bảo dưỡng xe"),
        ("Chủ nhà nói từ tháng Ba năm sau tiền thuê tăng lên năm triệu", "tiền thuê tăng lên", "thuê",
         "năm tới phải trả bao nhiêu cho căn hộ"),
        ("Chị Lan tháng sau chuyển vào Sài Gòn làm ở một công ty thiết kế", "công ty thiết kế", "Sài Gòn",
         "chị Lan đổi việc đi thành phố nào"),
        ("Sáng Chủ nhật tôi chơi cầu lông với đồng nghiệp ở nhà thi đấu", "chơi cầu lông với đồng nghiệp", "cầu lông",
         "cuối tuần tập môn thể thao nào"),
        ("Hộ chiếu sắp hết hạn, phải đi gia hạn trước tháng Sáu", "phải đi gia hạn", "Hộ chiếu",
         "giấy tờ đi nước ngoài khi nào cần làm lại"),
        ("Bố chỉ uống cà phê không caffeine sau bốn giờ chiều", "cà phê không caffeine", "caffeine",
         "buổi tối nên pha gì cho ba uống"),
    ],
    "en": [
        ("My daughter has cello lessons at the community centre on Wednesday afternoons",
         "cello lessons at the community centre", "cello", "which instrument is the kid learning midweek"),
        ("Aunt Ruth's new mobile number ends in 4471", "new mobile number", "Ruth", "how do I phone my aunt"),
        ("The spare key is under the blue flowerpot by the front door", "under the blue flowerpot", "flowerpot",
         "how do I get in when nobody is home"),
        ("Priyanka is allergic to shellfish, so no prawn curry at the dinner", "allergic to shellfish", "shellfish",
         "what should Priyanka avoid eating"),
        ("The car needs an oil change at 45,000 km", "oil change at", "oil", "when is the vehicle due for servicing"),
        ("The landlord says rent goes up to 1,450 from March", "rent goes up", "landlord",
         "how much will the flat cost us in spring"),
        ("Kofi starts at a design studio in Lisbon next month", "design studio in Lisbon", "Lisbon",
         "which city is Kofi moving to for work"),
        ("On Sunday mornings I play badminton with colleagues at the sports hall", "badminton with colleagues",
         "badminton", "what sport do I do at the weekend"),
        ("The passport renewal needs new photos from the post office", "needs new photos", "passport",
         "what is required for the travel document"),
        ("Dad only drinks decaf after 4pm", "only drinks decaf", "decaf", "what coffee should I make my father in the evening"),
    ],
}

SMALL_TALK: dict[str, list[str]] = {
    "zh": ["早上下了点小雨，出门忘了带伞。", "中午在楼下吃了一碗牛肉面。", "地铁今天特别挤。",
           "晚上看了一部关于海洋的纪录片。", "阳台上的番茄终于红了。", "给妈妈打了个电话，她心情不错。",
           "冰箱里的牛奶喝完了。", "下班路上堵车堵了四十分钟。", "做了一锅红烧肉，吃了两天。",
           "楼上的邻居又在装修。", "周五晚上和朋友去看了电影。", "今天走了一万二千步。"],
    "ja": ["朝から小雨で、傘を忘れてしまった。", "昼はラーメン屋で味噌ラーメンを食べた。", "電車が十分遅れた。",
           "夜に海の生き物のドキュメンタリーを見た。", "ベランダのトマトがやっと赤くなった。", "母に電話したら元気そうだった。",
           "冷蔵庫の牛乳が切れていた。", "帰り道で渋滞に巻き込まれた。", "カレーを多めに作って冷凍した。",
           "上の階の人がまた模様替えをしている。", "金曜の夜に友だちと映画を見た。", "今日は一万二千歩歩いた。"],
    "ko": ["아침에 비가 조금 와서 우산을 챙겼다.", "점심으로 김치찌개를 먹었다.", "지하철이 오늘 유난히 붐볐다.",
           "저녁에 바다 다큐멘터리를 봤다.", "베란다 토마토가 드디어 빨갛게 익었다.", "엄마한테 전화했더니 기분이 좋으셨다.",
           "냉장고에 우유가 떨어졌다.", "퇴근길에 차가 많이 막혔다.", "된장찌개를 넉넉히 끓여 두었다.",
           "윗집이 또 공사를 한다.", "금요일 저녁에 친구들과 영화를 봤다.", "오늘은 만 이천 걸음을 걸었다."],
    "vi": ["Sáng nay trời mưa lất phất, quên mang ô.", "Trưa ăn một bát phở bò ở đầu ngõ.", "Xe buýt hôm nay rất đông.",
           "Tối xem một bộ phim tài liệu về đại dương.", "Cà chua ngoài ban công cuối cùng cũng chín đỏ.",
           "Gọi điện cho mẹ, mẹ vui lắm.", "Trong tủ lạnh hết sữa rồi.", "Đường về nhà tắc gần một tiếng.",
           "Nấu một nồi canh chua ăn cả hai ngày.", "Nhà hàng xóm tầng trên lại sửa nhà.",
           "Tối thứ Sáu đi xem phim với bạn bè.", "Hôm nay đi bộ được mười hai nghìn bước."],
    "en": ["Grey morning, drizzle until about eleven.", "Had a bowl of ramen at the place downstairs.",
           "The train was packed today.", "Watched a documentary about the ocean in the evening.",
           "The tomatoes on the balcony are finally red.", "Phoned Mum, she sounded cheerful.",
           "Ran out of milk again.", "Traffic on the way home was awful.", "Made a big pot of stew for the week.",
           "The upstairs neighbours are renovating again.", "Went to the cinema with friends on Friday night.",
           "Walked twelve thousand steps today."],
}

#: per language, the day of its first log (each language's logs on days of their own)
FIRST_DAY = {"zh": "2026-03-01", "ja": "2026-04-01", "ko": "2026-05-01", "vi": "2026-06-01", "en": "2026-07-01"}
KINDS = ("substring", "short", "paraphrase")
#: the letter of each kind in a question's id: zh03w is the short word of Chinese fact 3
KIND_CODE = {"substring": "s", "short": "w", "paraphrase": "p"}


def write_language(memory: Path, lang: str, seed: int) -> list[dict[str, object]]:
    """Write one language's logs (one fact a day among small talk); return its golden."""
    import datetime as dt

    rng = random.Random(seed)
    facts = FACTS[lang]
    first = dt.date.fromisoformat(FIRST_DAY[lang])
    days = sorted(rng.sample(range(28), len(facts) + 4))  # four logs of small talk only
    with_fact = sorted(rng.sample(range(len(days)), len(facts)))
    golden: list[dict[str, object]] = []
    for d, offset in enumerate(days):
        day = (first + dt.timedelta(days=offset)).isoformat()
        lines = rng.sample(SMALL_TALK[lang], rng.randint(4, 7))
        if d in with_fact:
            i = with_fact.index(d)
            note, substring, short, paraphrase = facts[i]
            lines.insert(rng.randint(0, len(lines)), note)
            split = "tune" if i < len(facts) // 2 else "held"
            for kind, query in zip(KINDS, (substring, short, paraphrase), strict=True):
                golden.append({"id": f"{lang}{i + 1:02d}{KIND_CODE[kind]}", "lang": lang, "query": query,
                               "kind": kind, "relevant": [{"path": f"memory/{day}.md", "contains": note}],
                               "split": split})
        (memory / f"{day}.md").write_text(f"# {day}\n\n" + "".join(f"- {ln}\n" for ln in lines),
                                          encoding="utf-8")
    return golden


def build() -> None:
    memory = HERE / "workspace" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for old in memory.glob("*.md"):
        old.unlink()
    golden: list[dict[str, object]] = []
    for n, lang in enumerate(FACTS):
        golden += write_language(memory, lang, 20261126 + n)
    golden.sort(key=lambda g: str(g["id"]))
    (HERE / "golden.jsonl").write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in golden),
                                       encoding="utf-8")


if __name__ == "__main__":
    build()
