"""The words of the sample folder (see ``sample_pdfs.py``): a pump maintenance manual and a
lease, each in English and in Chinese, with headings and numbered clauses. Qt-free.

The documents are invented but written like the real thing, so that questions such as
"How long is the warranty?", "When is the rent due?" or "押金是多少？" have one clear answer
on one page.
"""

from __future__ import annotations

Block = tuple[str, str]  # ("title" | "heading" | "para", text)

PUMP_MANUAL: list[Block] = [
    ("title", "CP-40 Centrifugal Pump: Operation and Maintenance Manual"),
    ("para", "This manual covers the CP-40 and CP-40S end-suction centrifugal pumps. Keep it "
             "near the pump and read Section 1 before installing, starting or servicing it."),
    ("heading", "1 Safety"),
    ("para", "1.1 Isolate the motor from the electrical supply and lock the isolator before any "
             "work on the pump. A running pump can start without warning when a float switch "
             "closes."),
    ("para", "1.2 Never run the pump dry. The mechanical seal is cooled by the pumped liquid and "
             "is destroyed within thirty seconds of dry running."),
    ("para", "1.3 Wear gloves and eye protection when draining the casing: the liquid may be hot "
             "and under residual pressure."),
    ("heading", "2 Installation"),
    ("para", "2.1 Mount the pump on a level concrete base at least 150 mm thick, with the four "
             "M12 anchor bolts supplied."),
    ("para", "2.2 Support the suction and discharge pipes independently; the pump flanges must not "
             "carry pipe loads. Fit an isolating valve on both sides of the pump."),
    ("para", "2.3 The motor needs a 400 V three-phase supply with an earth connection and a motor "
             "protection switch set to the rated current on the nameplate (7.8 A for the CP-40)."),
    ("heading", "3 Routine maintenance"),
    ("para", "3.1 Daily: check that the pump runs without unusual noise or vibration and that the "
             "mechanical seal does not leak more than a few drops per hour."),
    ("para", "3.2 Every 500 operating hours: grease the motor bearings with 10 g of lithium-based "
             "grease (NLGI grade 2) through the nipples on the bearing covers. Do not over-grease: "
             "excess grease overheats the bearings."),
    ("para", "3.3 Every 4,000 operating hours or once a year, whichever comes first: replace the "
             "mechanical seal (spare part CP-40-MS) and the casing O-ring (CP-40-OR), and check the "
             "impeller clearance. The clearance must be between 0.3 mm and 0.5 mm."),
    ("para", "3.4 Before a frost, drain the casing through the drain plug at its lowest point and "
             "leave the plug out until the pump is used again."),
    ("heading", "4 Troubleshooting"),
    ("para", "4.1 The pump delivers no water: check that the casing is primed, that the suction "
             "valve is open and that the motor turns in the direction of the arrow on the casing."),
    ("para", "4.2 The flow is too low: the impeller may be worn or blocked, or the suction lift "
             "may exceed the 6 m the CP-40 can manage. Clean the suction strainer first."),
    ("para", "4.3 The motor protection switch trips: measure the current. A current above 7.8 A "
             "usually means a liquid heavier than water or a rubbing impeller."),
    ("heading", "5 Warranty"),
    ("para", "5.1 The warranty period is 24 months from the date of delivery, or 18 months from the "
             "date of installation, whichever ends first."),
    ("para", "5.2 The warranty does not cover wear parts (mechanical seal, O-rings, bearings), "
             "damage from dry running or frost, or pumps serviced with parts that are not original."),
    ("para", "5.3 To make a claim, send the serial number from the nameplate and the delivery note "
             "to the service department within 14 days of noticing the fault."),
]

LEASE: list[Block] = [
    ("title", "Commercial Lease Agreement"),
    ("para", "This agreement is made between Harbourside Properties Ltd (the Landlord) and "
             "Northwind Design GmbH (the Tenant) for the office described in Clause 1."),
    ("heading", "Clause 1 Premises"),
    ("para", "1.1 The Landlord lets to the Tenant the office on the third floor of 12 Quay Street, "
             "with a floor area of 240 square metres, together with two parking spaces in the "
             "basement garage."),
    ("heading", "Clause 2 Term"),
    ("para", "2.1 The lease begins on 1 March 2024 and runs for five years, until 28 February 2029."),
    ("para", "2.2 The Tenant may extend the lease once by a further five years by written notice "
             "given at least six months before the end of the term."),
    ("heading", "Clause 3 Rent"),
    ("para", "3.1 The rent is 4,800 euros per month, plus service charges of 620 euros per month."),
    ("para", "3.2 Rent and service charges are due in advance on the third working day of each "
             "month, paid by bank transfer to the account the Landlord names in writing."),
    ("para", "3.3 The rent is adjusted on 1 March of each year by the change in the consumer price "
             "index over the previous twelve months, but by no more than 3 percent."),
    ("heading", "Clause 4 Deposit"),
    ("para", "4.1 The Tenant pays a deposit of three months' rent (14,400 euros) before the keys "
             "are handed over. The Landlord keeps it in a separate interest-bearing account."),
    ("para", "4.2 The deposit is repaid within two months of the end of the lease, less any sums "
             "the Tenant owes under this agreement."),
    ("heading", "Clause 5 Repairs and maintenance"),
    ("para", "5.1 The Landlord keeps the structure, the roof, the lifts and the heating system in "
             "good repair. The Tenant keeps the inside of the office in good decorative order."),
    ("para", "5.2 The Tenant reports any damage to the Landlord without delay; urgent repairs may be "
             "made by the Tenant at the Landlord's cost if the Landlord does not act within 48 hours."),
    ("heading", "Clause 6 Termination"),
    ("para", "6.1 Either party may end the lease for good cause. Good cause includes rent arrears of "
             "more than two months."),
    ("para", "6.2 Notice of termination must be given in writing. At the end of the lease the "
             "Tenant returns the office empty and clean, with all keys."),
]

PUMP_MANUAL_ZH: list[Block] = [
    ("title", "CP-40 离心泵使用与维护手册"),
    ("para", "本手册适用于CP-40和CP-40S端吸式离心泵。请将手册放在水泵附近，安装、启动或维修前请先阅读第1章。"),
    ("heading", "第1章 安全"),
    ("para", "第1.1条 在对水泵进行任何操作之前，必须切断电机电源并锁定隔离开关。浮球开关闭合时，运行中的水泵可能会突然启动。"),
    ("para", "第1.2条 严禁水泵干转。机械密封依靠输送的液体冷却，干转三十秒内即会损坏。"),
    ("heading", "第2章 安装"),
    ("para", "第2.1条 水泵应安装在厚度不小于150毫米的水平混凝土基础上，并用随机提供的四个M12地脚螺栓固定。"),
    ("para", "第2.2条 进水管和出水管应单独支撑，泵的法兰不得承受管道的重量。泵的两侧均应安装隔离阀。"),
    ("heading", "第3章 日常维护"),
    ("para", "第3.1条 每天检查水泵运行时有无异常噪音或振动，机械密封每小时的泄漏不得超过几滴。"),
    ("para", "第3.2条 每运行500小时，通过轴承盖上的油嘴为电机轴承加注10克锂基润滑脂（NLGI 2级）。润滑脂不宜过多，否则轴承会过热。"),
    ("para", "第3.3条 每运行4000小时或每年一次（以先到者为准），更换机械密封（备件号CP-40-MS）和泵壳O形圈，并检查叶轮间隙。间隙应在0.3毫米至0.5毫米之间。"),
    ("para", "第3.4条 霜冻前，应通过泵壳最低处的放水塞排空泵壳内的液体。"),
    ("heading", "第4章 保修"),
    ("para", "第4.1条 保修期为自交货之日起24个月，或自安装之日起18个月，以先到期者为准。"),
    ("para", "第4.2条 保修不包括易损件（机械密封、O形圈、轴承），也不包括因干转或冻结造成的损坏。"),
    ("para", "第4.3条 申请保修时，请在发现故障后14天内将铭牌上的序列号和送货单寄给售后服务部。"),
]

LEASE_ZH: list[Block] = [
    ("title", "房屋租赁合同"),
    ("para", "出租方（甲方）：张明。承租方（乙方）：李华。甲乙双方经协商一致，就房屋租赁事宜订立本合同。"),
    ("heading", "第1条 租赁房屋"),
    ("para", "甲方将位于上海市浦东新区东方路88号5号楼1203室的房屋出租给乙方居住使用，建筑面积为89平方米。"),
    ("heading", "第2条 租赁期限"),
    ("para", "租赁期限为两年，自2024年9月1日起至2026年8月31日止。租赁期满后乙方如需续租，应提前一个月书面通知甲方。"),
    ("heading", "第3条 租金及支付方式"),
    ("para", "第3.1条 每月租金为人民币6500元。"),
    ("para", "第3.2条 租金按季度支付，乙方应在每季度第一个月的5日前将当季租金转入甲方指定的银行账户。"),
    ("heading", "第4条 押金"),
    ("para", "乙方应在签订本合同时向甲方支付押金人民币13000元（相当于两个月租金）。租赁期满，乙方交还房屋且无欠费的，甲方应在七日内无息退还押金。"),
    ("heading", "第5条 维修责任"),
    ("para", "第5.1条 房屋及其附属设施的自然损坏由甲方负责维修。甲方应在接到乙方通知后三日内进行维修。"),
    ("para", "第5.2条 因乙方使用不当造成的损坏，由乙方负责修复或赔偿。"),
    ("heading", "第6条 合同解除"),
    ("para", "乙方拖欠租金超过三十日的，甲方有权解除合同。任何一方提前解除合同的，应提前三十日书面通知对方，并支付一个月租金作为违约金。"),
]

# (file name, title, Chinese?, blocks)
SAMPLES: list[tuple[str, str, bool, list[Block]]] = [
    ("pump-maintenance-manual.pdf", "CP-40 Centrifugal Pump: Operation and Maintenance Manual", False, PUMP_MANUAL),
    ("office-lease.pdf", "Commercial Lease Agreement", False, LEASE),
    ("pump-manual-zh.pdf", "CP-40 离心泵使用与维护手册", True, PUMP_MANUAL_ZH),
    ("lease-zh.pdf", "房屋租赁合同", True, LEASE_ZH),
]
